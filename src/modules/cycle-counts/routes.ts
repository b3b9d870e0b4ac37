import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, IdParams, ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { BatchOnly, BatchWithLines, CycleCountBatch, DEFAULT_PER_PAGE, Generate, LineParams, ListQuery, RecordCount } from './schemas.ts';
import {
  approveLine, cancelCycleCount, completeCycleCount, generateCycleCount, getCycleCount, listCycleCounts, recordCount, startCycleCount,
} from './service.ts';

const tags = ['Cycle counts'];
// Counting is the warehouse's own work: a partner-scoped key is refused on every route, whatever its scopes (checked
// before the permission, so the answer says why).
const view = { permission: 'cycle_counts.view', staffOnly: true } as const;
const count = { permission: 'cycle_counts.count', staffOnly: true } as const;
const approve = { permission: 'cycle_counts.approve', staffOnly: true } as const;
const staffOnly = 'Warehouse staff only: a partner-scoped key gets 403.';
const inProgress = 'The batch must be in_progress (else 422 invalid_status).';

export async function cycleCountRoutes(app: App, { db, reads }: ModuleDeps) {
  app.get('/cycle-counts', {
    config: view,
    schema: { tags, summary: 'List cycle count batches, newest first', description: staffOnly, querystring: ListQuery, response: responses({ 200: ListEnvelope(CycleCountBatch) }) },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listCycleCounts(reads, request.query, page);
    return listResponse(rows, total, page);
  });

  app.post('/cycle-counts', {
    // No body means the default sample.
    config: { ...count, optionalBody: true },
    schema: {
      tags, summary: 'Generate a draft batch over a random sample of items with stock',
      description: `${staffOnly} One line per available bin of each sampled item, system_qty its quantity now. No item with stock: 422 invalid_request.`,
      body: Generate, response: responses({ 201: DataEnvelope(BatchOnly) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: { batch: await generateCycleCount(db, actorOf(request), request.body.num_items ?? 10) } }));

  app.get('/cycle-counts/:id', {
    config: view,
    schema: { tags, summary: 'Get a cycle count batch with its lines', description: staffOnly, params: IdParams, response: responses({ 200: DataEnvelope(BatchWithLines) }) },
  }, async (request) => ({ data: await getCycleCount(db, request.params.id) }));

  app.post('/cycle-counts/:id/start', {
    config: count,
    schema: { tags, summary: 'Start counting (draft -> in_progress)', description: `${staffOnly} The starter becomes assigned_to.`, params: IdParams, response: responses({ 200: DataEnvelope(BatchOnly) }) },
  }, async (request) => ({ data: { batch: await startCycleCount(db, actorOf(request), request.params.id) } }));

  app.post('/cycle-counts/:id/counts', {
    config: count,
    schema: {
      tags, summary: 'Record the count of a line',
      description: `${staffOnly} ${inProgress} system_qty is refreshed to the bin's quantity now and variance = counted_qty - system_qty; a line may be recounted until approved.`,
      params: IdParams, body: RecordCount, response: noContent,
    },
  }, async (request, reply) => {
    await recordCount(db, actorOf(request), request.params.id, request.body);
    return reply.code(204).send(null);
  });

  app.post('/cycle-counts/:id/lines/:lineId/approve', {
    config: approve,
    schema: {
      tags, summary: 'Approve a counted line',
      description: `${staffOnly} ${inProgress} A variance is written to the bin as a cycle_count_correction movement (422 insufficient_stock when the bin no longer holds what it would take).`,
      params: LineParams, response: noContent,
    },
  }, async (request, reply) => {
    await approveLine(db, actorOf(request), request.params.id, request.params.lineId);
    return reply.code(204).send(null);
  });

  app.post('/cycle-counts/:id/complete', {
    config: count,
    schema: {
      tags, summary: 'Complete a batch (in_progress -> completed)',
      description: `${staffOnly} Every line must be counted (else 422 invalid_status); variances not approved by then are not applied.`,
      params: IdParams, response: responses({ 200: DataEnvelope(BatchWithLines) }),
    },
  }, async (request) => ({ data: await completeCycleCount(db, actorOf(request), request.params.id) }));

  app.post('/cycle-counts/:id/cancel', {
    config: count,
    schema: { tags, summary: 'Cancel a draft or in-progress batch', description: `${staffOnly} Corrections already approved stay.`, params: IdParams, response: responses({ 200: DataEnvelope(BatchOnly) }) },
  }, async (request) => ({ data: { batch: await cancelCycleCount(db, actorOf(request), request.params.id) } }));
}
