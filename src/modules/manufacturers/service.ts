// Supply partners: the reference list every partner-owned record points to.
import type { Kysely } from 'kysely';
import { containsPattern } from '../../db/like.ts';
import type { DB, ManufacturersTable } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import { inPartnerScope, type Actor } from '../../http/auth.ts';
import { forbidden, notFound } from '../../domain/errors.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import type { Selectable } from 'kysely';

export type ManufacturerRow = Selectable<ManufacturersTable>;

export async function listManufacturers(db: Kysely<DB>, actor: Actor, filter: { q?: string; is_active?: boolean }, page: Page) {
  let query = inPartnerScope(db.selectFrom('manufacturers'), actor, 'manufacturers.id');
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) => eb.or([eb('code', 'ilike', pattern), eb('name', 'ilike', pattern)]));
  }
  if (filter.is_active !== undefined) query = query.where('is_active', '=', filter.is_active);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('code').$call(onePage(page)).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

export async function getManufacturer(db: Kysely<DB>, actor: Actor, id: string): Promise<ManufacturerRow> {
  const row = await inPartnerScope(db.selectFrom('manufacturers').selectAll().where('id', '=', id), actor, 'manufacturers.id')
    .executeTakeFirst();
  if (!row) throw notFound('manufacturer');
  return row;
}

export async function createManufacturer(db: Kysely<DB>, actor: Actor, input: { code: string; name: string }) {
  if (actor.manufacturerId) throw forbidden('a partner-scoped key cannot create supply partners');
  return inTransaction(db, async (tx) => {
    const row = await tx
      .insertInto('manufacturers')
      .values({ code: input.code.toUpperCase(), name: input.name.trim() })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'manufacturer', entityId: row.id, action: 'created', manufacturerId: row.id, after: row });
    return row;
  });
}

export async function updateManufacturer(
  db: Kysely<DB>,
  actor: Actor,
  id: string,
  changes: { code?: string; name?: string; is_active?: boolean },
) {
  return inTransaction(db, async (tx) => {
    const before = await inPartnerScope(tx.selectFrom('manufacturers').selectAll().where('id', '=', id), actor, 'manufacturers.id')
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound('manufacturer');
    const after = await tx
      .updateTable('manufacturers')
      .set({
        ...(changes.code !== undefined && { code: changes.code.toUpperCase() }),
        ...(changes.name !== undefined && { name: changes.name.trim() }),
        ...(changes.is_active !== undefined && { is_active: changes.is_active }),
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: 'manufacturer', entityId: id, action: 'updated', manufacturerId: id, before, after });
    return after;
  });
}
