import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MovementType } from '../../db/column-types.ts';
import { sendCsvExport } from '../../http/csv-export.ts';
import { CSV, JSON_TYPE, preferredRepresentation } from '../../http/representations.ts';
import { DataEnvelope, listOrCsv, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { ADJUSTMENT_TYPES, AdjustmentsQuery, CreateAdjustment, DEFAULT_PER_PAGE, Movement, MovementsQuery } from './schemas.ts';
import { allMovementRows, listMovements, postAdjustment, type LedgerFilter } from './service.ts';

const tags = ['Inventory'];
/** The export's columns: the ledger row's fields, in the order of the JSON. */
const MOVEMENT_COLUMNS = Object.keys(Movement.properties);

export async function inventoryRoutes(app: App, { db, reads }: ModuleDeps) {
  app.post('/inventory/adjustments', {
    config: { permission: 'inventory.edit' },
    schema: {
      tags, summary: 'Adjust an item\'s stock in one bin',
      description: 'Writes an adjustment movement; a bin cannot go below zero (422 insufficient_stock).',
      body: CreateAdjustment, response: responses({ 201: DataEnvelope(Movement) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: await postAdjustment(db, actorOf(request), request.body) }));

  /** A ledger's page, or with `Accept: text/csv` all its rows the filters match. */
  const ledger = (fileName: string, types?: readonly MovementType[]) => async (request: FastifyRequest<{ Querystring: LedgerFilter & { page?: number; per_page?: number } }>, reply: FastifyReply) => {
    if (preferredRepresentation(request, [JSON_TYPE, CSV]) === CSV) {
      return sendCsvExport(reply, reads, { query: allMovementRows(reads, actorOf(request), request.query, types), columns: MOVEMENT_COLUMNS, fileName, toRow: (row) => row });
    }
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listMovements(reads, actorOf(request), request.query, page, types);
    return listResponse(rows, total, page);
  };

  app.get('/inventory/adjustments', {
    config: { permission: 'inventory.view' },
    schema: { tags, summary: 'The adjustments ledger (adjustments and cycle-count corrections), newest first', querystring: AdjustmentsQuery, response: listOrCsv(Movement) },
  }, ledger('adjustments.csv', ADJUSTMENT_TYPES));

  app.get('/inventory/movements', {
    config: { permission: 'inventory.view' },
    schema: { tags, summary: 'The movement ledger, newest first', querystring: MovementsQuery, response: listOrCsv(Movement) },
  }, ledger('movements.csv'));
}
