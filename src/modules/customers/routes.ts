import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import {
  CreateCustomer, Customer, CustomerParams, DEFAULT_PER_PAGE, DropShipLocation, DropShipLocationEnvelope, DropShipLocationInput,
  DropShipLocationParams, ListChildrenQuery, ListCustomersQuery, ThirdPartyPayer, ThirdPartyPayerEnvelope, ThirdPartyPayerInput,
  ThirdPartyPayerParams, UpdateCustomer,
} from './schemas.ts';
import {
  addToAddressBook, createCustomer, DROP_SHIP_LOCATIONS, getCustomer, hideInAddressBook, listAddressBook, listCustomers,
  THIRD_PARTY_PAYERS, updateAddressBook, updateCustomer,
} from './service.ts';

const tags = ['Customers'];
const view = { permission: 'customers.view' } as const;
const edit = { permission: 'customers.edit' } as const;
const otherCustomer = 'A record of another customer is 404.';

const includeHidden = (value: string | undefined) => value === '1' || value === 'true';

export async function customerRoutes(app: App, { db, reads }: ModuleDeps) {
  app.get('/customers', {
    config: view,
    schema: { tags, summary: 'List customers', description: 'Ordered by name, then account number.', querystring: ListCustomersQuery, response: responses({ 200: ListEnvelope(Customer) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listCustomers(reads, request.query, page);
    return listResponse(rows, total, page);
  });

  app.post('/customers', {
    config: edit,
    schema: { tags, summary: 'Create a customer', body: CreateCustomer, response: responses({ 201: DataEnvelope(Customer) }) },
  }, async (request, reply) => reply.code(201).send({ data: await createCustomer(db, actorOf(request), request.body) }));

  app.get('/customers/:id', {
    config: view,
    schema: { tags, summary: 'Get a customer', params: CustomerParams, response: responses({ 200: DataEnvelope(Customer) }) },
  }, async (request) => ({ data: await getCustomer(db, request.params.id) }));

  app.patch('/customers/:id', {
    config: edit,
    schema: { tags, summary: 'Update a customer', params: CustomerParams, body: UpdateCustomer, response: responses({ 200: DataEnvelope(Customer) }) },
  }, async (request) => ({ data: await updateCustomer(db, actorOf(request), request.params.id, request.body) }));

  app.get('/customers/:id/drop-ship-locations', {
    config: view,
    schema: { tags, summary: 'Drop-ship locations of a customer', description: 'Hidden ones only with include_hidden=1. Ordered by name.', params: CustomerParams, querystring: ListChildrenQuery, response: responses({ 200: ListEnvelope(DropShipLocation) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listAddressBook(db, DROP_SHIP_LOCATIONS, request.params.id, includeHidden(request.query.include_hidden), page);
    return listResponse(rows, total, page);
  });

  app.post('/customers/:id/drop-ship-locations', {
    config: edit,
    schema: { tags, summary: 'Add a drop-ship location (422 invalid_drop_ship_location)', params: CustomerParams, body: DropShipLocationInput, response: responses({ 201: DataEnvelope(DropShipLocationEnvelope) }) },
  }, async (request, reply) => reply.code(201).send({
    data: { drop_ship_location: await addToAddressBook(db, actorOf(request), DROP_SHIP_LOCATIONS, request.params.id, request.body) },
  }));

  app.patch('/customers/:id/drop-ship-locations/:locationId', {
    config: edit,
    schema: { tags, summary: 'Update a drop-ship location (422 invalid_drop_ship_location)', description: otherCustomer, params: DropShipLocationParams, body: DropShipLocationInput, response: responses({ 200: DataEnvelope(DropShipLocationEnvelope) }) },
  }, async (request) => ({
    data: { drop_ship_location: await updateAddressBook(db, actorOf(request), DROP_SHIP_LOCATIONS, request.params.id, request.params.locationId, request.body) },
  }));

  app.post('/customers/:id/drop-ship-locations/:locationId/hide', {
    config: edit,
    schema: { tags, summary: 'Hide a drop-ship location from order entry', description: `Orders that reference it keep it. Hiding a hidden one changes nothing. ${otherCustomer}`, params: DropShipLocationParams, response: responses({ 200: DataEnvelope(DropShipLocationEnvelope) }) },
  }, async (request) => ({
    data: { drop_ship_location: await hideInAddressBook(db, actorOf(request), DROP_SHIP_LOCATIONS, request.params.id, request.params.locationId) },
  }));

  app.get('/customers/:id/third-party-payers', {
    config: view,
    schema: { tags, summary: 'Third-party freight payers of a customer', description: 'Hidden ones only with include_hidden=1. Ordered by name.', params: CustomerParams, querystring: ListChildrenQuery, response: responses({ 200: ListEnvelope(ThirdPartyPayer) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listAddressBook(db, THIRD_PARTY_PAYERS, request.params.id, includeHidden(request.query.include_hidden), page);
    return listResponse(rows, total, page);
  });

  app.post('/customers/:id/third-party-payers', {
    config: edit,
    schema: { tags, summary: 'Add a third-party payer (422 invalid_third_party_payer)', params: CustomerParams, body: ThirdPartyPayerInput, response: responses({ 201: DataEnvelope(ThirdPartyPayerEnvelope) }) },
  }, async (request, reply) => reply.code(201).send({
    data: { third_party_payer: await addToAddressBook(db, actorOf(request), THIRD_PARTY_PAYERS, request.params.id, request.body) },
  }));

  app.patch('/customers/:id/third-party-payers/:payerId', {
    config: edit,
    schema: { tags, summary: 'Update a third-party payer (422 invalid_third_party_payer)', description: otherCustomer, params: ThirdPartyPayerParams, body: ThirdPartyPayerInput, response: responses({ 200: DataEnvelope(ThirdPartyPayerEnvelope) }) },
  }, async (request) => ({
    data: { third_party_payer: await updateAddressBook(db, actorOf(request), THIRD_PARTY_PAYERS, request.params.id, request.params.payerId, request.body) },
  }));

  app.post('/customers/:id/third-party-payers/:payerId/hide', {
    config: edit,
    schema: { tags, summary: 'Hide a third-party payer from order entry', description: `Orders that reference it keep it. Hiding a hidden one changes nothing. ${otherCustomer}`, params: ThirdPartyPayerParams, response: responses({ 200: DataEnvelope(ThirdPartyPayerEnvelope) }) },
  }, async (request) => ({
    data: { third_party_payer: await hideInAddressBook(db, actorOf(request), THIRD_PARTY_PAYERS, request.params.id, request.params.payerId) },
  }));
}
