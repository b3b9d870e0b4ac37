import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { ADJUSTMENT_TYPES, AdjustmentsQuery, CreateAdjustment, DEFAULT_PER_PAGE, Movement, MovementsQuery } from './schemas.ts';
import { listMovements, postAdjustment } from './service.ts';

const tags = ['Inventory'];

export async function inventoryRoutes(app: App, { db, reads }: ModuleDeps) {
  app.post('/inventory/adjustments', {
    config: { permission: 'inventory.edit' },
    schema: {
      tags, summary: 'Adjust an item\'s stock in one bin',
      description: 'Writes an adjustment movement; a bin cannot go below zero (422 insufficient_stock).',
      body: CreateAdjustment, response: responses({ 201: DataEnvelope(Movement) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: await postAdjustment(db, actorOf(request), request.body) }));

  app.get('/inventory/adjustments', {
    config: { permission: 'inventory.view' },
    schema: { tags, summary: 'The adjustments ledger (adjustments and cycle-count corrections), newest first', querystring: AdjustmentsQuery, response: responses({ 200: ListEnvelope(Movement) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listMovements(reads, actorOf(request), request.query, page, ADJUSTMENT_TYPES);
    return listResponse(rows, total, page);
  });

  app.get('/inventory/movements', {
    config: { permission: 'inventory.view' },
    schema: { tags, summary: 'The movement ledger, newest first', querystring: MovementsQuery, response: responses({ 200: ListEnvelope(Movement) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listMovements(reads, actorOf(request), request.query, page);
    return listResponse(rows, total, page);
  });
}
