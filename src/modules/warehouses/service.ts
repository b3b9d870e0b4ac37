// Warehouses (sites). Locations belong to one; MAIN and its QUARANTINE location come with the first migration.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory, type Author } from '../../domain/history.ts';
import { onePage, type Page } from '../../http/pagination.ts';

export async function listWarehouses(db: Kysely<DB>, page: Page) {
  const [rows, total] = await Promise.all([
    db.selectFrom('warehouses').selectAll().orderBy('code').$call(onePage(page)).execute(),
    db.selectFrom('warehouses').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export async function createWarehouse(db: Kysely<DB>, author: Author, input: { code: string; name: string }) {
  return inTransaction(db, async (tx) => {
    const row = await tx
      .insertInto('warehouses')
      .values({ code: input.code.toUpperCase(), name: input.name.trim() })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, author, { entityType: 'warehouse', entityId: row.id, action: 'created', after: row });
    return row;
  });
}
