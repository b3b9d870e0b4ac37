import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, IdParams, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import {
  CreateLocation, DEFAULT_PER_PAGE, ListLocationsQuery, Location, LocationStockItem, LocationStockQuery, MoveAll, MovedAll,
  Relocate, Relocated, UpdateLocation,
} from './schemas.ts';
import {
  createLocation, getLocation, listLocations, locationStock, moveAll, relocate, setLocationActive, updateLocation,
} from './service.ts';

const tags = ['Locations'];
const view = { permission: 'inventory.view' } as const;
const edit = { permission: 'inventory.edit' } as const;
const staffOnly = 'Warehouse staff only: a partner-scoped key gets 403.';

export async function locationRoutes(app: App, { db, reads }: ModuleDeps) {
  app.get('/locations', {
    config: view,
    schema: { tags, summary: 'List locations with item_count and total_qty', querystring: ListLocationsQuery, response: responses({ 200: ListEnvelope(Location) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listLocations(reads, actorOf(request), request.query, page);
    return listResponse(rows, total, page);
  });

  app.post('/locations', {
    config: edit,
    schema: { tags, summary: 'Create a location', description: staffOnly, body: CreateLocation, response: responses({ 201: DataEnvelope(Location) }) },
  }, async (request, reply) => reply.code(201).send({ data: await createLocation(db, actorOf(request), request.body) }));

  app.get('/locations/:id', {
    config: view,
    schema: { tags, summary: 'Get a location', params: IdParams, response: responses({ 200: DataEnvelope(Location) }) },
  }, async (request) => ({ data: await getLocation(db, request.params.id) }));

  app.patch('/locations/:id', {
    config: edit,
    schema: { tags, summary: 'Update a location', description: staffOnly, params: IdParams, body: UpdateLocation, response: responses({ 200: DataEnvelope(Location) }) },
  }, async (request) => ({ data: await updateLocation(db, actorOf(request), request.params.id, request.body) }));

  app.post('/locations/:id/retire', {
    config: edit,
    schema: { tags, summary: 'Retire a location (refused while it holds stock: 422 location_not_empty)', description: staffOnly, params: IdParams, response: responses({ 200: DataEnvelope(Location) }) },
  }, async (request) => ({ data: await setLocationActive(db, actorOf(request), request.params.id, false) }));

  app.post('/locations/:id/reactivate', {
    config: edit,
    schema: { tags, summary: 'Reactivate a retired location', description: staffOnly, params: IdParams, response: responses({ 200: DataEnvelope(Location) }) },
  }, async (request) => ({ data: await setLocationActive(db, actorOf(request), request.params.id, true) }));

  app.get('/locations/:id/stock', {
    config: view,
    schema: { tags, summary: 'Item stock sitting in a location', description: 'A partner-scoped key sees only its own items.', params: IdParams, querystring: LocationStockQuery, response: responses({ 200: ListEnvelope(LocationStockItem) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await locationStock(db, actorOf(request), request.params.id, page);
    return listResponse(rows, total, page);
  });

  app.post('/locations/:id/relocate', {
    config: edit,
    schema: {
      tags, summary: 'Move part of one item\'s stock to another location (a transfer pair)',
      description: `${staffOnly} An unknown destination code is 422 unknown_location (details.location_code) unless auto_create is true.`,
      params: IdParams, body: Relocate, response: responses({ 200: DataEnvelope(Relocated) }),
    },
  }, async (request) => ({ data: await relocate(db, actorOf(request), request.params.id, request.body) }));

  app.post('/locations/:id/move-all', {
    config: edit,
    schema: {
      tags, summary: 'Move all available stock of a location to another',
      description: `${staffOnly} An unknown destination code is 422 unknown_location (details.location_code) unless auto_create is true.`,
      params: IdParams, body: MoveAll, response: responses({ 200: DataEnvelope(MovedAll) }),
    },
  }, async (request) => ({ data: await moveAll(db, actorOf(request), request.params.id, request.body) }));
}
