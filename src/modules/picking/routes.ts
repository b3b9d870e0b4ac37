import type { TSchema } from 'typebox';
import type { Permission } from '../../domain/roles.ts';
import { actorOf, type Actor } from '../../http/auth.ts';
import { listResponse, pageOf } from '../../http/pagination.ts';
import { DataEnvelope, ListEnvelope, responses } from '../../http/schemas.ts';
import type { App, ModuleDeps } from '../../http/types.ts';
import { OrderDetail } from '../orders/schemas.ts';
import { packBatch } from './packing.ts';
import {
  BatchParams, DEFAULT_PER_PAGE, LineParams, ListBatchesQuery, MispickBody, ParcelParams, PickBody, PickLine, PickSession, PickupBody,
  PickupParams, QualityBody, ShipBody, ShortBody, StageBody, StartBatch, TrackingBody,
} from './schemas.ts';
import {
  cancelBatch, completeBatch, flagQuality, listBatches, mispickLine, pickLine, readSession, shortLine, startBatch, verifyLine,
} from './service.ts';
import type { PickSessionLineResponse, PickSessionResponse } from './serialize.ts';
import { addParcel, flagTracking, pickUpOrder, removeParcel, setTracking, shipBatch, stageBatch } from './shipping.ts';

const tags = ['Pick, pack and ship'];
const session = responses({ 200: DataEnvelope(PickSession) });
const sessionLine = responses({ 200: DataEnvelope(PickLine) });
const picking = { permission: 'picking.execute' } as const;
const shipping = { permission: 'shipping.edit' } as const;
// The office reads batches with its orders; the floor reads the batches it works.
const readBatches = { anyPermission: ['orders.view', 'picking.execute', 'shipping.edit'] } as const;

export async function pickingRoutes(app: App, deps: ModuleDeps) {
  const { db, reads } = deps;

  app.post('/pick-batches', {
    config: picking,
    schema: {
      tags, summary: 'Start a pick batch for a released or partially shipped order',
      description: 'One line per warehouse order line with units no live batch holds (a second batch picks only what the first did not take); ' +
        '422 invalid_status when nothing is left. The 201 has each line\'s PickBatchLineID as the empty string, as the spec says.',
      body: StartBatch, response: responses({ 201: DataEnvelope(PickSession) }),
    },
  }, async (request, reply) => reply.code(201).send({ data: await startBatch(db, actorOf(request), request.body.order_id) }));

  app.get('/pick-batches', {
    config: readBatches,
    schema: {
      tags, summary: 'Pick batches (newest first)', description: 'Filters: status, order, manufacturer. A partner-scoped key sees its partner\'s only.',
      querystring: ListBatchesQuery, response: responses({ 200: ListEnvelope(PickSession) }),
    },
  }, async (request) => {
    const page = pageOf(request.query, DEFAULT_PER_PAGE);
    const { rows, total } = await listBatches(reads, actorOf(request), request.query, page);
    return listResponse(rows, total, page);
  });

  app.get('/pick-batches/:id', {
    config: readBatches,
    schema: { tags, summary: 'A pick batch as a pick session', params: BatchParams, response: session },
  }, async (request) => ({ data: await readSession(db, actorOf(request), request.params.id) }));

  // The route table of the floor's actions. A line action answers with its line as the session shows it now (it changes
  // nothing else of the batch); a batch action with the batch as it is now.
  type LineAction = (actor: Actor, batchId: string, lineId: string, body: any) => Promise<PickSessionLineResponse>;
  const lineRoute = (path: string, summary: string, description: string, body: TSchema | null, act: LineAction) =>
    app.post(`/pick-batches/:id/lines/:lineId/${path}`, {
      config: picking,
      schema: { tags, summary, description: `${description} Answers with the line as the session shows it.`, params: LineParams, ...(body ? { body } : {}), response: sessionLine },
    }, async (request) => ({ data: await act(actorOf(request), request.params.id, request.params.lineId, request.body) }));

  lineRoute('pick', 'Pick units of a line', 'Picks add up to QtyToPick (more is 422); the line is picked when they reach it. ' +
    'A finished line (picked, short) is 422 invalid_status.', PickBody,
  (actor, id, lineId, body) => pickLine(db, actor, id, lineId, body.qty_picked));
  lineRoute('short', 'Close a line short', 'qty_short must be the units not picked; opens a short-pick exception and an order block.', ShortBody,
    (actor, id, lineId, body) => shortLine(db, actor, id, lineId, body));
  lineRoute('mispick', 'Flag a mispick', 'Sets the line aside (skipped) and opens a mispick exception and an order block; flagging again supersedes.', MispickBody,
    (actor, id, lineId, body) => mispickLine(db, actor, id, lineId, body));
  lineRoute('quality', 'Flag a quality problem', 'Sets the line aside (skipped) and opens a quality exception and an order block.', QualityBody,
    (actor, id, lineId, body) => flagQuality(db, actor, id, lineId, body));
  lineRoute('verify', 'Pack verification of a line', 'On a completed batch, a line with units picked; stamps PackVerifiedAt (again: no change).', null,
    (actor, id, lineId) => verifyLine(db, actor, id, lineId));

  type BatchAction = (actor: Actor, batchId: string, body: any) => Promise<PickSessionResponse>;
  const batchRoute = (path: string, config: { permission: Permission; optionalBody?: boolean }, summary: string, description: string, body: TSchema | null, act: BatchAction) =>
    app.post(`/pick-batches/:id/${path}`, {
      config,
      schema: { tags, summary, description, params: BatchParams, ...(body ? { body } : {}), response: session },
    }, async (request) => ({ data: await act(actorOf(request), request.params.id, request.body) }));

  batchRoute('complete', picking, 'Complete the pick', 'in_progress -> completed once no line is pending.', null,
    (actor, id) => completeBatch(db, actor, id));
  batchRoute('pack', picking, 'Pack the batch', 'completed -> packed once every line with units picked is verified; files the packing list PDF under the order ' +
    '(include=documents shows it as packing_list).', null, (actor, id) => packBatch(deps, actor, id));
  batchRoute('cancel', picking, 'Cancel the batch', 'From in_progress or completed: its lines go back to the order (the next batch picks them); ' +
    'the order blocks it opened are cancelled, its exceptions stay for review.', null, (actor, id) => cancelBatch(db, actor, id));
  batchRoute('stage', shipping, 'Stage the packed batch', 'slot: code of an active staging or shipping location (else 422); null: handed over directly ' +
    '(StagedAt set, StagedSlot null).', StageBody, (actor, id, body) => stageBatch(db, actor, id, body.slot));
  batchRoute('parcels', shipping, 'Add a parcel with its label', 'ParcelSeq counts up and is never reused; TrackingNumber of the session is the lowest live ParcelSeq\'s.',
    TrackingBody, (actor, id, body) => addParcel(db, actor, id, body));
  batchRoute('flag-tracking', shipping, 'Flag the tracking for the office', 'Stamps TrackingFlaggedForOfficeAt (once).', null,
    (actor, id) => flagTracking(db, actor, id));
  batchRoute('ship', { ...shipping, optionalBody: true }, 'Ship the packed batch', 'Tracking is optional: given, it is captured as the primary box, then the batch ships; absent, it ships ' +
    'with what it has. Stock leaves the bins the lines were picked from (on-hand and committed fall together); the order becomes shipped or ' +
    'partial. An open order block is 422 invalid_status.', ShipBody, (actor, id, body) => shipBatch(db, actor, id, body));

  app.delete('/pick-batches/:id/parcels/:parcelId', {
    config: shipping,
    schema: { tags, summary: 'Remove a parcel', description: 'Its ParcelSeq is not given out again.', params: ParcelParams, response: session },
  }, async (request) => ({ data: await removeParcel(db, actorOf(request), request.params.id, request.params.parcelId) }));

  app.put('/pick-batches/:id/tracking', {
    config: shipping,
    schema: {
      tags, summary: 'Set the primary box\'s tracking', description: 'The lowest live parcel takes the label; without parcels a first one is made.',
      params: BatchParams, body: TrackingBody, response: session,
    },
  }, async (request) => ({ data: await setTracking(db, actorOf(request), request.params.id, request.body) }));

  app.post('/orders/:id/pickup', {
    config: shipping,
    schema: {
      tags, summary: 'Will-call pickup of a packed order',
      description: 'For orders shipped by will call (ship-via mode will_call or freight terms WILL CALL): ships every packed batch and records who collected it.',
      params: PickupParams, body: PickupBody, response: responses({ 200: DataEnvelope(OrderDetail) }),
    },
  }, async (request) => ({ data: await pickUpOrder(db, actorOf(request), request.params.id, request.body) }));

}
