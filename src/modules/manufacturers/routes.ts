import { pageOf, listResponse } from '../../http/pagination.ts';
import { actorOf } from '../../http/auth.ts';
import { DataEnvelope, IdParams, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { CreateManufacturer, DEFAULT_PER_PAGE, ListManufacturersQuery, Manufacturer, UpdateManufacturer } from './schemas.ts';
import { createManufacturer, getManufacturer, listManufacturers, updateManufacturer } from './service.ts';

const tags = ['Manufacturers'];

export async function manufacturerRoutes(app: App, { db }: ModuleDeps) {
  app.get('/manufacturers', {
    config: { permission: 'manufacturers.view' },
    schema: { tags, summary: 'List supply partners', description: 'A partner-scoped key sees only its own.', querystring: ListManufacturersQuery, response: responses({ 200: ListEnvelope(Manufacturer) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listManufacturers(db, actorOf(request), request.query, page);
    return listResponse(rows, total, page);
  });

  app.post('/manufacturers', {
    config: { permission: 'manufacturers.edit' },
    schema: { tags, summary: 'Create a supply partner', body: CreateManufacturer, response: responses({ 201: DataEnvelope(Manufacturer) }) },
  }, async (request, reply) => {
    return reply.code(201).send({ data: await createManufacturer(db, actorOf(request), request.body) });
  });

  app.get('/manufacturers/:id', {
    config: { permission: 'manufacturers.view' },
    schema: { tags, summary: 'Get a supply partner', params: IdParams, response: responses({ 200: DataEnvelope(Manufacturer) }) },
  }, async (request) => ({ data: await getManufacturer(db, actorOf(request), request.params.id) }));

  app.patch('/manufacturers/:id', {
    config: { permission: 'manufacturers.edit' },
    schema: { tags, summary: 'Update a supply partner', params: IdParams, body: UpdateManufacturer, response: responses({ 200: DataEnvelope(Manufacturer) }) },
  }, async (request) => ({ data: await updateManufacturer(db, actorOf(request), request.params.id, request.body) }));
}
