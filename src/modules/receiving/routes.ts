import { actorOf } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, IdParams, ListEnvelope, noContent, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { importRoutes } from './import-routes.ts';
import { markLinePassed, recordInspection, reopenBatch, verifyBatch, waiveLine } from './inspection.ts';
import { postBatch, voidBatch } from './posting.ts';
import { listBatches } from './queries.ts';
import {
  AddLine, Batch, BatchOnly, BatchWithLines, CreateBatch, DEFAULT_PER_PAGE, EditLine, LineOnly, LineParams, ListBatchesQuery,
  RecordInspection, SetLocation, VoidBatch,
} from './schemas.ts';
import { addLine, createBatch, deleteBatch, deleteLine, editLine, getBatch, setLocationOfAllLines } from './service.ts';

const tags = ['Receiving'];
const view = { permission: 'receiving.view' } as const;
const create = { permission: 'receiving.create' } as const;
const qc = { permission: 'receiving.qc' } as const;
const inspect = { permission: 'receiving.inspect' } as const;
const post = { permission: 'receiving.post' } as const;
const withLines = responses({ 200: DataEnvelope(BatchWithLines) });
const draftOnly = 'The batch must be draft (else 422 invalid_status).';
const verifiedOnly = 'The batch must be verified (else 422 invalid_status).';

export async function receivingRoutes(app: App, deps: ModuleDeps) {
  const { db, reads } = deps;

  app.get('/receiving', {
    config: view,
    schema: {
      tags, summary: 'List receiving batches, newest first (received_date, then creation)',
      description: 'A partner-scoped key sees only its own partner\'s batches (manufacturer is ignored). Rows carry line_count and total_qty.',
      querystring: ListBatchesQuery, response: responses({ 200: ListEnvelope(Batch) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listBatches(reads, actorOf(request), request.query, page);
    return listResponse(rows, total, page);
  });

  app.post('/receiving', {
    config: create,
    schema: {
      tags, summary: 'Create a draft receiving batch', description: 'A partner-scoped key creates only for its own partner (else 403).',
      body: CreateBatch, response: responses({ 201: DataEnvelope(BatchOnly) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: { batch: await createBatch(db, actorOf(request), request.body) } }));

  await importRoutes(app, deps);

  app.get('/receiving/:id', {
    config: view,
    schema: { tags, summary: 'Get a batch with its lines', params: IdParams, response: withLines },
  }, async (request) => ({ data: await getBatch(db, actorOf(request), request.params.id) }));

  app.delete('/receiving/:id', {
    config: create,
    schema: { tags, summary: 'Delete a draft batch with its lines', description: draftOnly, params: IdParams, response: noContent },
  }, async (request, reply) => {
    await deleteBatch(db, actorOf(request), request.params.id);
    return reply.code(204).send(null);
  });

  app.post('/receiving/:id/lines', {
    config: create,
    schema: {
      tags, summary: 'Add a line',
      description: `${draftOnly} The item must belong to the batch's partner (else 422 manufacturer_mismatch). The answer has the QC fields null and no joined keys.`,
      params: IdParams, body: AddLine, response: responses({ 201: DataEnvelope(LineOnly) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: { line: await addLine(db, actorOf(request), request.params.id, request.body) } }));

  app.patch('/receiving/:id/lines/:lineId', {
    config: create,
    schema: { tags, summary: 'Edit a line', description: draftOnly, params: LineParams, body: EditLine, response: withLines },
  }, async (request) => ({ data: await editLine(db, actorOf(request), request.params.id, request.params.lineId, request.body) }));

  app.delete('/receiving/:id/lines/:lineId', {
    config: create,
    schema: { tags, summary: 'Remove a line', description: draftOnly, params: LineParams, response: noContent },
  }, async (request, reply) => {
    await deleteLine(db, actorOf(request), request.params.id, request.params.lineId);
    return reply.code(204).send(null);
  });

  app.post('/receiving/:id/location', {
    config: create,
    schema: {
      tags, summary: 'Put every line to one location', description: `${draftOnly} The location must be active and not a quarantine location (else 422 invalid_request).`,
      params: IdParams, body: SetLocation, response: withLines,
    },
  }, async (request) => ({ data: await setLocationOfAllLines(db, actorOf(request), request.params.id, request.body.location_id) }));

  app.post('/receiving/:id/lines/:lineId/inspection', {
    config: qc,
    schema: { tags, summary: 'Record the QC counts of a line', description: verifiedOnly, params: LineParams, body: RecordInspection, response: withLines },
  }, async (request) => ({ data: await recordInspection(db, actorOf(request), request.params.id, request.params.lineId, request.body) }));

  app.post('/receiving/:id/lines/:lineId/pass', {
    config: qc,
    schema: {
      tags, summary: 'Mark a line passed (toggle)',
      description: `${verifiedOnly} Passes every unit; on a line already fully passed it reverts the line to pending.`,
      params: LineParams, response: withLines,
    },
  }, async (request) => ({ data: await markLinePassed(db, actorOf(request), request.params.id, request.params.lineId) }));

  app.post('/receiving/:id/lines/:lineId/waive', {
    config: qc,
    schema: { tags, summary: 'Waive the inspection of a line', description: `${verifiedOnly} Clears earlier inspection data.`, params: LineParams, response: withLines },
  }, async (request) => ({ data: await waiveLine(db, actorOf(request), request.params.id, request.params.lineId) }));

  app.post('/receiving/:id/verify', {
    config: inspect,
    schema: { tags, summary: 'Verify a draft batch (draft -> verified)', description: 'Needs at least one line (else 422 batch_empty).', params: IdParams, response: withLines },
  }, async (request) => ({ data: await verifyBatch(db, actorOf(request), request.params.id) }));

  app.post('/receiving/:id/reopen', {
    config: inspect,
    schema: { tags, summary: 'Reopen a verified batch (verified -> draft)', description: 'Clears the inspection data of every line.', params: IdParams, response: withLines },
  }, async (request) => ({ data: await reopenBatch(db, actorOf(request), request.params.id) }));

  app.post('/receiving/:id/post', {
    config: post,
    schema: {
      tags, summary: 'Post a verified batch into stock (verified -> posted)',
      description: 'No line may be pending inspection (else 422 pending_qc). Passed and waived units go on hand at the line\'s location, else the item\'s primary bin ' +
        '(a line with neither: 422 invalid_request); failed units go to the quarantine location. One transaction.',
      params: IdParams, response: withLines,
    },
  }, async (request) => ({ data: await postBatch(db, actorOf(request), request.params.id) }));

  app.post('/receiving/:id/void', {
    config: post,
    schema: {
      tags, summary: 'Void a posted batch (posted -> voided)',
      description: 'Takes the posted units back out of their bins with compensating movements; average cost stays. Refused (422 insufficient_stock, nothing changed) when a bin no longer holds them or orders have committed them.',
      params: IdParams, body: VoidBatch, response: withLines,
    },
  }, async (request) => ({ data: await voidBatch(db, actorOf(request), request.params.id, request.body.reason) }));
}
