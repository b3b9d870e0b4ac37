// Ship-via codes: global carriers an order ships by. Their mode drives the order's shipping rules.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory, type Author } from '../../domain/history.ts';

const COLUMNS = ['id', 'code', 'description', 'carrier_name', 'mode', 'is_active'] as const;

/** Active carriers: parcel first, then LTL, then will call, alphabetical within each. */
export async function listActiveShipVia(db: Kysely<DB>) {
  return db
    .selectFrom('ship_via')
    .select(COLUMNS)
    .where('is_active', '=', true)
    .orderBy((eb) => eb.case().when('mode', '=', 'parcel').then(0).when('mode', '=', 'ltl').then(1).when('mode', '=', 'will_call').then(2).else(3).end())
    .orderBy('code')
    .execute();
}

export async function createShipVia(
  db: Kysely<DB>,
  author: Author,
  input: { code: string; description: string; carrier_name?: string | null; mode: 'parcel' | 'ltl' | 'will_call'; is_active?: boolean },
) {
  return inTransaction(db, async (tx) => {
    const row = await tx
      .insertInto('ship_via')
      .values({
        code: input.code.toUpperCase(),
        description: input.description.trim(),
        carrier_name: input.carrier_name?.trim() || null,
        mode: input.mode,
        is_active: input.is_active ?? true,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    await recordHistory(tx, author, { entityType: 'ship_via', entityId: row.id, action: 'created', after: row });
    return row;
  });
}
