import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { CreateWarehouse, DEFAULT_PER_PAGE, ListWarehousesQuery, Warehouse } from './schemas.ts';
import { createWarehouse, listWarehouses } from './service.ts';

const tags = ['Warehouses'];

export async function warehouseRoutes(app: App, { db }: ModuleDeps) {
  app.get('/warehouses', {
    config: { permission: 'inventory.view' },
    schema: { tags, summary: 'List warehouses', querystring: ListWarehousesQuery, response: responses({ 200: ListEnvelope(Warehouse) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listWarehouses(db, page);
    return listResponse(rows, total, page);
  });

  app.post('/warehouses', {
    config: { administers: true },
    schema: { tags, summary: 'Create a warehouse', body: CreateWarehouse, response: responses({ 201: DataEnvelope(Warehouse) }) },
  }, async (request, reply) => reply.code(201).send({ data: await createWarehouse(db, actorOf(request), request.body) }));
}
