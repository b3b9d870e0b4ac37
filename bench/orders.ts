// Order entry on the bench data set: request bodies of 10-line orders, each over items no other body names, so that
// repeated entry never runs an item out of available stock (which would answer 422 negative_stock), and none with an
// open pick exception.
import { sql } from 'kysely';
import { connectPostgres } from '../src/db/connect.ts';

export const ORDER_LINES = 10;

/** count bodies of POST /orders: a partner, one of the customers, and 10 of the partner's well-stocked active items. */
export async function orderBodies(url: string, count: number): Promise<string[]> {
  const database = connectPostgres(url, { poolSize: 1, statementTimeoutMs: 0 });
  try {
    const { rows: items } = await sql<{ id: string; manufacturer_id: string }>`
      select id, manufacturer_id from items where status = 'active' and qty_available >= 100
        -- An item with an open pick exception takes new warehouse lines only when acknowledged (422 exception_blocked).
        and not exists (select 1 from pick_exceptions e where e.item_id = items.id and e.status = 'open')
      order by manufacturer_id, md5(id::text)`.execute(database.db);
    const { rows: customers } = await sql<{ id: string }>`select id from customers order by account_number`.execute(database.db);
    const byPartner = new Map<string, string[]>();
    for (const item of items) byPartner.set(item.manufacturer_id, [...(byPartner.get(item.manufacturer_id) ?? []), item.id]);
    const partners = [...byPartner.keys()];
    const bodies: string[] = [];
    for (let i = 0; bodies.length < count; i++) {
      const partner = partners[i % partners.length]!;
      const round = Math.floor(i / partners.length);
      const lines = byPartner.get(partner)!.slice(round * ORDER_LINES, (round + 1) * ORDER_LINES);
      if (lines.length < ORDER_LINES) throw new Error(`not enough stocked items for ${count} distinct order bodies`);
      bodies.push(JSON.stringify({
        manufacturer_id: partner,
        customer_id: customers[i % customers.length]!.id,
        customer_po_number: `BENCH-${i}`,
        lines: lines.map((item_id, n) => ({ item_id, qty_ordered: 1 + (n % 3) })),
      }));
    }
    return bodies;
  } finally {
    await database.close();
  }
}
