// Packing: completed -> packed once every line with units picked is verified, with the packing list PDF filed under
// the order in the same transaction.
import { sql, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { invalidStatus } from '../../domain/errors.ts';
import type { DB } from '../../db/schema.ts';
import { recordAndEmitAnswering } from '../../domain/events.ts';
import type { Actor } from '../../http/auth.ts';
import type { ModuleDeps } from '../../http/types.ts';
import { renderPackingList } from '../documents/packing-list.ts';
import { inTransactionWithDocuments, putDocument } from '../documents/service.ts';
import { lockBatch, sessionQuery, type BatchRow } from './queries.ts';
import { serializeSession } from './serialize.ts';
import { batchEvent, requireBatchStatus } from './service.ts';

/**
 * What the packing list shows: the order's header, ship-to and carrier, and the batch's packed lines (those with units
 * picked), with whether each was verified.
 */
async function packingListOf(tx: Transaction<DB>, batch: BatchRow, packedAt: Date, packedByName: string) {
  const order = await tx.selectFrom('orders as o').innerJoin('customers as c', 'c.id', 'o.customer_id')
    .leftJoin('ship_via as sv', 'sv.id', 'o.ship_via_id')
    .select((eb) => [
      'o.order_number', 'o.release_number', 'o.customer_po_number', 'c.name as customer_name', 'o.ship_to_name', 'o.ship_to_address_1',
      'o.ship_to_address_2', 'o.ship_to_city', 'o.ship_to_state', 'o.ship_to_zip', 'sv.code as ship_via_code', 'sv.description as ship_via_description',
      'o.ship_via_other',
      jsonArrayFrom(eb.selectFrom('pick_batch_lines as l').innerJoin('order_lines as ol', 'ol.id', 'l.order_line_id')
        .select(['l.line_number', 'l.item_number_display', 'l.item_description', 'l.unit_of_measure', 'ol.qty_ordered', 'l.qty_picked', 'l.pack_verified_at'])
        .where('l.pick_batch_id', '=', batch.id).where('l.qty_picked', '>', 0).orderBy('l.line_number')).as('lines'),
    ])
    .where('o.id', '=', batch.order_id).executeTakeFirstOrThrow();
  return {
    order_number: order.order_number,
    release_number: order.release_number === null ? null : String(order.release_number),
    customer_po_number: order.customer_po_number,
    customer_name: order.customer_name,
    ship_to: {
      name: order.ship_to_name, address_line_1: order.ship_to_address_1, address_line_2: order.ship_to_address_2,
      city: order.ship_to_city, state: order.ship_to_state, zip_code: order.ship_to_zip, country: null,
    },
    carrier: order.ship_via_code ? `${order.ship_via_code} — ${order.ship_via_description}` : order.ship_via_other,
    batch_number: batch.batch_number,
    packed_by_name: packedByName,
    packed_at: packedAt,
    lines: order.lines.map((line) => ({
      line_number: line.line_number, item_number_display: line.item_number_display, description: line.item_description,
      unit_of_measure: line.unit_of_measure, qty_ordered: line.qty_ordered, qty_packed: line.qty_picked, verified: line.pack_verified_at !== null,
    })),
  };
}

export async function packBatch(deps: ModuleDeps, actor: Actor, batchId: string) {
  // A pack that fails after the PDF was written leaves no file behind.
  return inTransactionWithDocuments(deps.db, deps.documents, async (tx) => {
    const batch = await lockBatch(tx, actor, batchId);
    requireBatchStatus(batch, ['completed'], 'pack');
    const packedAt = new Date();
    const list = await packingListOf(tx, batch, packedAt, actor.userName);
    if (list.lines.length === 0) throw invalidStatus('nothing was picked on this batch; cancel it instead of packing');
    const unverified = list.lines.filter((line) => !line.verified).length;
    if (unverified) throw invalidStatus(`${unverified} picked line(s) not verified yet: verify each before packing`);
    const file = await putDocument(tx, deps.documents, actor, {
      entityType: 'order', entityId: batch.order_id, manufacturerId: batch.manufacturer_id,
      fileName: `packing-list-${list.order_number}-${batch.batch_number}.pdf`, fileType: 'application/pdf', bytes: await renderPackingList(list),
      description: `Packing list of ${batch.batch_number}`, tags: ['packing_list'],
    });
    const documentId = file.document.id;
    // The batch, the document, their history rows and the event: one statement, which answers with the session as it
    // began (packing changes nothing a session shows but the status).
    const [session] = await recordAndEmitAnswering(tx, actor, {
      entityType: 'pick_batch', entityId: batchId, action: 'packed', manufacturerId: batch.manufacturer_id,
      before: { status: batch.status }, after: { status: 'packed', packing_list_document_id: documentId },
    }, 'pick_batch.packed', { ...batchEvent({ ...batch, status: 'packed' }, list.order_number), packing_list_document_id: documentId }, {
      before: [file.history],
      writes: sql`packed as (update pick_batches set status = 'packed', packed_at = ${packedAt}, packed_by = ${actor.userId}, updated_at = ${packedAt}
        where id = ${batchId}), document as (${file.insert})`,
      answer: sessionQuery(actor, batchId),
    });
    return serializeSession({ ...session!, status: 'packed' });
  });
}
