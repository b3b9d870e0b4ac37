import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf, pageParams } from '../../http/pagination.ts';
import { Closed, DataEnvelope, IdParams, ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { ROLE_DEFINITIONS, ROLES } from '../../domain/roles.ts';
import { AcceptInvite, CreateUser, DEFAULT_PER_PAGE, InviteParams, ListUsersQuery, RoleDescription, UpdateUser, User } from './schemas.ts';
import { acceptInvite, createUser, getUser, listUsers, reissueInvite, setUserActive, updateUser } from './service.ts';

const tags = ['Administration'];
const administers = { administers: true } as const;
const changesUser = { administers: true, changesActors: true } as const;

export async function adminRoutes(app: App, { db, config }: ModuleDeps) {
  app.get('/admin/users', {
    config: administers,
    schema: { tags, summary: 'List users', querystring: ListUsersQuery, response: responses({ 200: ListEnvelope(User) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listUsers(db, request.query, page);
    return listResponse(rows, total, page);
  });

  app.post('/admin/users', {
    config: { ...administers, secretFields: ['invite_url'] },
    schema: { tags, summary: 'Create a user (a consignor by invite)', body: CreateUser, response: responses({ 201: DataEnvelope(User) }) },
  }, async (request, reply) => reply.code(201).send({ data: await createUser(db, actorOf(request), request.body, config.publicUrl) }));

  app.get('/admin/users/:id', {
    config: administers,
    schema: { tags, summary: 'Get a user', params: IdParams, response: responses({ 200: DataEnvelope(User) }) },
  }, async (request) => ({ data: await getUser(db, request.params.id) }));

  app.patch('/admin/users/:id', {
    config: changesUser,
    schema: {
      tags, summary: 'Update a user', description: 'A role change takes effect on the user\'s keys at the next request.',
      params: IdParams, body: UpdateUser, response: responses({ 200: DataEnvelope(User) }),
    },
  }, async (request) => ({ data: await updateUser(db, actorOf(request), request.params.id, request.body) }));

  app.post('/admin/users/:id/deactivate', {
    config: changesUser,
    schema: { tags, summary: 'Deactivate a user (their keys stop at once)', params: IdParams, response: noContent },
  }, async (request, reply) => {
    await setUserActive(db, actorOf(request), request.params.id, false);
    return reply.code(204).send(null);
  });

  app.post('/admin/users/:id/reactivate', {
    config: changesUser,
    schema: { tags, summary: 'Reactivate a user', params: IdParams, response: noContent },
  }, async (request, reply) => {
    await setUserActive(db, actorOf(request), request.params.id, true);
    return reply.code(204).send(null);
  });

  app.post('/admin/users/:id/invite', {
    config: { ...administers, secretFields: ['invite_url'] },
    schema: { tags, summary: 'Issue a new invite to a consignor who has not set a password', params: IdParams, response: responses({ 200: DataEnvelope(User) }) },
  }, async (request) => ({ data: await reissueInvite(db, actorOf(request), request.params.id, config.publicUrl) }));

  app.get('/admin/roles', {
    config: administers,
    schema: { tags, summary: 'Roles and their permissions', querystring: Closed(pageParams(DEFAULT_PER_PAGE)), response: responses({ 200: ListEnvelope(RoleDescription) }) },
  }, async (request) => {
    // The roles are the code's, a handful: paged like every list, from memory.
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const roles = ROLES.slice(page.offset, page.offset + page.perPage).map((role) => {
      const definition = ROLE_DEFINITIONS[role];
      return {
        role,
        partner_scoped: definition.partnerScoped,
        administers: definition.administers,
        api_access: definition.apiAccess,
        permissions: [...definition.permissions],
      };
    });
    return listResponse(roles, ROLES.length, page);
  });
}

/** Outside /api/v1: the invited consignor has no key yet; the token in the path is the credential. */
export async function inviteRoutes(app: App, { db }: ModuleDeps) {
  app.post('/invites/:token/accept', {
    schema: {
      tags, summary: 'Accept a consignor invite by setting a password', description: 'No API key: the invite token authenticates. 404 unknown or used token, 410 expired.',
      params: InviteParams, body: AcceptInvite, response: responses({ 200: DataEnvelope(User) }),
    },
  }, async (request) => ({ data: await acceptInvite(db, request.params.token, request.body.password) }));
}
