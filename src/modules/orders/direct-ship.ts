// Direct shipping: the supply partner ships some lines itself. The warehouse asks it to (by the mailer's outbox event,
// or out of band), and records when the partner shipped; an order of direct lines only ships when they all have.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Carrier, OrderStatus } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { emit } from '../../domain/events.ts';
import { recordHistory } from '../../domain/history.ts';
import type { Actor } from '../../http/auth.ts';
import { ApiError, invalidRequest, invalidStatus, notFound } from '../../domain/errors.ts';
import { activeContactsWithRole } from '../contacts/service.ts';
import { lockOrder } from './queries.ts';
import { orderEvent, pendingDirectLine } from './read.ts';
import type { OrderRow } from './serialize.ts';

/** Direct lines are asked for and shipped while the order is open. */
const OPEN: OrderStatus[] = ['entered', 'selected', 'released', 'partial'];
const DIRECT_SHIP_ROLE = 'direct_ship';

/** The named lines of the order (404 for one that is not), each with a direct quantity (422 otherwise). */
async function directLines(tx: Transaction<DB>, actor: Actor, orderId: string, lineIds: string[]) {
  const order = await lockOrder(tx, actor, orderId);
  if (!OPEN.includes(order.status)) throw invalidStatus(`cannot direct-ship lines of an order that is ${order.status}`);
  const ids = [...new Set(lineIds)];
  const lines = await tx.selectFrom('order_lines').selectAll().where('order_id', '=', orderId).where('id', 'in', ids).orderBy('line_number').execute();
  if (lines.length !== ids.length) throw notFound('order line');
  const warehouseOnly = lines.find((line) => line.qty_direct === 0);
  if (warehouseOnly) throw invalidRequest(`line ${warehouseOnly.line_number} has no direct quantity`);
  return { order, lines };
}

/** ups, fedex, usps or other, from what a person or a carrier system calls the carrier. */
function normalizeCarrier(value: string | null | undefined): Carrier {
  const name = (value ?? '').toLowerCase().replace(/[^a-z]/g, '');
  if (name.startsWith('ups') || name === 'unitedparcelservice') return 'ups';
  if (name.includes('fedex') || name.includes('federalexpress')) return 'fedex';
  if (name.startsWith('usps') || name.includes('postal')) return 'usps';
  return 'other';
}

/**
 * Asks the supply partner to ship the lines: by e-mail through the mailer's outbox event (which needs an active
 * direct_ship contact of the partner with an address, else 400 no_email_contact), or out of band (recorded only).
 */
export async function notifyDirectShip(
  db: Kysely<DB>, actor: Actor, orderId: string, input: { line_ids: string[]; note?: string | null }, via: 'email' | 'out_of_band',
) {
  return inTransaction(db, async (tx) => {
    const { order, lines } = await directLines(tx, actor, orderId, input.line_ids);
    const recipients = via === 'email'
      ? (await activeContactsWithRole(tx, 'manufacturer', order.manufacturer_id, DIRECT_SHIP_ROLE)).filter((contact) => contact.email)
      : [];
    if (via === 'email' && recipients.length === 0) {
      throw new ApiError(400, 'no_email_contact', 'the supply partner has no active direct_ship contact with an e-mail address');
    }
    const now = new Date();
    const updated = await tx
      .updateTable('order_lines')
      .set({ direct_notified_at: now, direct_notified_by: actor.userId, direct_notified_via: via, updated_at: now })
      .where('id', 'in', lines.map((line) => line.id))
      .returningAll()
      .execute();
    updated.sort((a, b) => a.line_number - b.line_number);
    await recordHistory(tx, actor, {
      entityType: 'order', entityId: orderId, action: 'direct_ship_notified', manufacturerId: order.manufacturer_id,
      after: { via, line_ids: updated.map((line) => line.id) },
    });
    const lineSummaries = updated.map((line) => ({ order_line_id: line.id, line_number: line.line_number, item_number_display: line.item_number_display, qty_direct: line.qty_direct }));
    if (via === 'email') {
      // The mailer's work order: the service sends no e-mail itself. The note travels with it and is not kept on the order.
      await emit(tx, 'order.direct_ship_notification_requested', {
        ...orderEvent(order), to: recipients.map((contact) => ({ name: [contact.first_name, contact.last_name].filter(Boolean).join(' '), email: contact.email })),
        lines: lineSummaries, note: input.note ?? null,
      }, order.manufacturer_id);
    } else {
      await emit(tx, 'order.direct_ship_notified', { ...orderEvent(order), via, lines: lineSummaries }, order.manufacturer_id);
    }
    return { rows: updated.map(pendingDirectLine) };
  });
}

/**
 * An order of direct lines only ships when every line has shipped, and is partial while some have. An order with
 * warehouse lines ships when the last of its units has shipped, whichever shipment was last; until then its warehouse
 * shipments decide whether it is partial.
 */
export async function followDirectShipments(tx: Transaction<DB>, actor: Actor, order: OrderRow): Promise<void> {
  const lines = await tx.selectFrom('order_lines').select(['qty_warehouse', 'qty_ordered', 'qty_shipped', 'direct_shipped_at']).where('order_id', '=', order.id).execute();
  if (lines.length === 0 || !lines.some((line) => line.direct_shipped_at)) return;
  const allShipped = lines.every((line) => line.qty_shipped >= line.qty_ordered);
  if (lines.some((line) => line.qty_warehouse > 0) && !allShipped) return;
  const status: OrderStatus = allShipped ? 'shipped' : 'partial';
  if (status === order.status) return;
  const now = new Date();
  const after = await tx
    .updateTable('orders')
    .set({ status, updated_by: actor.userId, updated_at: now, ...(status === 'shipped' ? { shipped_at: now, shipped_by: actor.userId } : {}) })
    .where('id', '=', order.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordHistory(tx, actor, { entityType: 'order', entityId: order.id, action: status, manufacturerId: order.manufacturer_id, before: { status: order.status }, after: { status } });
  if (status === 'shipped') await emit(tx, 'order.shipped', orderEvent(after), order.manufacturer_id);
}

/** Records that the partner shipped the lines (source api, this key); the carrier is normalized. */
export async function markDirectShipped(
  db: Kysely<DB>, actor: Actor, orderId: string,
  input: { line_ids: string[]; tracking_number?: string | null; carrier?: string | null; note?: string | null },
) {
  return inTransaction(db, async (tx) => {
    const { order, lines } = await directLines(tx, actor, orderId, input.line_ids);
    const shipped = lines.find((line) => line.direct_shipped_at !== null);
    if (shipped) throw invalidRequest(`line ${shipped.line_number} is already direct-shipped`);
    const now = new Date();
    for (const line of lines) {
      await tx.updateTable('order_lines').set({
        direct_shipped_at: now,
        direct_shipped_by: actor.userId,
        direct_tracking_number: input.tracking_number?.trim() || null,
        direct_carrier: normalizeCarrier(input.carrier),
        direct_ship_note: input.note?.trim() || null,
        direct_shipped_source: 'api',
        direct_shipped_api_key_id: actor.apiKeyId,
        qty_shipped: sql<number>`qty_shipped + qty_direct`,
        updated_at: now,
      }).where('id', '=', line.id).execute();
    }
    await recordHistory(tx, actor, {
      entityType: 'order', entityId: orderId, action: 'direct_shipped', manufacturerId: order.manufacturer_id,
      after: { line_ids: lines.map((line) => line.id), tracking_number: input.tracking_number ?? null, carrier: normalizeCarrier(input.carrier) },
    });
    await emit(tx, 'order.direct_shipped', {
      ...orderEvent(order), tracking_number: input.tracking_number ?? null, carrier: normalizeCarrier(input.carrier),
      lines: lines.map((line) => ({ order_line_id: line.id, line_number: line.line_number, qty_direct: line.qty_direct })),
    }, order.manufacturer_id);
    await followDirectShipments(tx, actor, order);
    const rows = await tx.selectFrom('order_lines').selectAll().where('id', 'in', lines.map((line) => line.id)).orderBy('line_number').execute();
    return { rows: rows.map(pendingDirectLine) };
  });
}
