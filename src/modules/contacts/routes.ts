import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import {
  AssociationParams, Contact, ContactParams, CreateContact, DEFAULT_PER_PAGE, EntityParams, LinkContact, LinkedContact,
  ListContactsQuery, UpdateContact,
} from './schemas.ts';
import { createContact, deactivateContact, getContact, linkContact, listContacts, unlinkContact, updateContact } from './service.ts';

const tags = ['Contacts'];
const entityView = 'Permission: the entity\'s view permission (`manufacturers.view` or `customers.view`). ' +
  'A partner-scoped key reaches only its own supply partner (404 otherwise).';
const entityEdit = 'Permission: the entity\'s edit permission (`manufacturers.edit` or `customers.edit`).';
const onLinked = (access: 'view' | 'edit') => `Permission: \`manufacturers.${access}\` or \`customers.${access}\` for at least one entity the ` +
  'contact is linked to (403 otherwise). ' +
  (access === 'edit'
    ? 'A contact linked to no entity needs both `manufacturers.edit` and `customers.edit` (or a system_admin key). '
    : 'A contact linked to no entity needs either view permission. ') +
  'A partner-scoped key reaches only contacts linked to its own partner (404 otherwise).';

export async function contactRoutes(app: App, { db }: ModuleDeps) {
  app.get('/contacts/:entityType/:entityID', {
    schema: {
      tags, summary: 'Active contacts of a supply partner or customer, primary first, then by last name',
      description: entityView, params: EntityParams, querystring: ListContactsQuery, response: responses({ 200: ListEnvelope(LinkedContact) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listContacts(db, actorOf(request), request.params.entityType, request.params.entityID, page);
    return listResponse(rows, total, page);
  });

  app.post('/contacts/:entityType/:entityID', {
    schema: {
      tags, summary: 'Create a contact linked to the entity (bare contact with association_id and role)',
      description: entityEdit, params: EntityParams, body: CreateContact, response: responses({ 201: LinkedContact }),
    },
  }, async (request, reply) => reply.code(201).send(
    await createContact(db, actorOf(request), request.params.entityType, request.params.entityID, request.body),
  ));

  app.get('/contacts/:id', {
    schema: { tags, summary: 'Get a contact, active or inactive (bare)', description: onLinked('view'), params: ContactParams, response: responses({ 200: Contact }) },
  }, async (request) => getContact(db, actorOf(request), request.params.id));

  app.patch('/contacts/:id', {
    schema: { tags, summary: 'Update a contact (bare)', description: onLinked('edit'), params: ContactParams, body: UpdateContact, response: responses({ 200: Contact }) },
  }, async (request) => updateContact(db, actorOf(request), request.params.id, request.body));

  app.post('/contacts/:id/deactivate', {
    schema: {
      tags, summary: 'Deactivate a contact: gone from lists and role lookups, links kept',
      description: `${onLinked('edit')} Deactivating an inactive contact changes nothing.`, params: ContactParams, response: noContent,
    },
  }, async (request, reply) => {
    await deactivateContact(db, actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });

  app.put('/contacts/:id/associations/:entityType/:entityID', {
    schema: {
      tags, summary: 'Link a contact to an entity, or change the role of its link',
      description: `${entityEdit} The key also needs edit on the contact: \`manufacturers.edit\` or \`customers.edit\` for at ` +
        'least one entity it is already linked to (both, or a system_admin key, for a contact linked to none). Sending an existing link again changes ' +
        'nothing; an inactive contact cannot be linked (422 invalid_status).',
      params: AssociationParams, body: LinkContact, response: responses({ 200: LinkedContact }),
    },
  }, async (request) => linkContact(db, actorOf(request), request.params.id, request.params.entityType, request.params.entityID, request.body.role));

  app.delete('/contacts/:id/associations/:entityType/:entityID', {
    schema: {
      tags, summary: 'Remove the link between a contact and an entity (the contact stays)',
      description: `${entityEdit} 404 when they are not linked.`, params: AssociationParams, response: noContent,
    },
  }, async (request, reply) => {
    await unlinkContact(db, actorOf(request), request.params.id, request.params.entityType, request.params.entityID);
    return reply.code(204).send(null);
  });
}
