// The customer list and the lookups of a customer's drop-ship locations and third-party payers.
import { sql, type Kysely, type Transaction } from 'kysely';
import { foldedContainsPattern } from '../../db/like.ts';
import { rowCount, totalOfPage } from '../../db/list-counts.ts';
import type { DB } from '../../db/schema.ts';
import { onePage, type Page } from '../../http/pagination.ts';
import type { CUSTOMER_STATUSES } from './schemas.ts';

type Executor = Kysely<DB> | Transaction<DB>;

/** The two address books of a customer; their tables share every column these queries touch. */
export type AddressTable = 'drop_ship_locations' | 'third_party_payers';

export interface CustomerFilter {
  q?: string;
  status?: (typeof CUSTOMER_STATUSES)[number];
}

function filteredCustomers(db: Kysely<DB>, filter: CustomerFilter) {
  let query = db.selectFrom('customers');
  if (filter.status) query = query.where('status', '=', filter.status);
  const text = filter.q?.trim();
  if (text) {
    // On the texts kept folded (migration 0047): ILIKE folded every row's texts as it read them.
    const pattern = foldedContainsPattern(text);
    query = query.where((eb) => eb.or([eb('account_number_folded', 'like', pattern), eb('name_folded', 'like', pattern)]));
  }
  return query;
}

/**
 * By name (case-insensitive), then account number, which is unique: pages never overlap. The page carries its total.
 * A text search reads and sorts every match before its page anyway, so it counts them in the same pass
 * (`count(*) over ()`); without one the count is its own read, an index's, beside a page that stops after its rows.
 */
export async function listCustomers(db: Kysely<DB>, filter: CustomerFilter, page: Page) {
  const searching = Boolean(filter.q?.trim());
  const total = rowCount(filteredCustomers(db, filter));
  const rows = await filteredCustomers(db, filter)
    .selectAll()
    .select(searching ? sql<number>`(count(*) over ())::int`.as('total_count') : sql<number>`${total}`.as('total_count'))
    .orderBy((eb) => eb.fn('lower', ['name']))
    .orderBy('account_number')
    .$call(onePage(page))
    .execute();
  return { rows: rows.map(({ total_count: _, ...row }) => row), total: await totalOfPage(db, rows, page, total) };
}

export const customerById = (db: Executor, id: string) => db.selectFrom('customers').selectAll().where('id', '=', id);

/** A customer's address records by name; hidden ones only when asked for. */
export async function listAddresses(db: Kysely<DB>, table: AddressTable, customerId: string, includeHidden: boolean, page: Page) {
  let query = db.selectFrom(table).where('customer_id', '=', customerId);
  if (!includeHidden) query = query.where('is_hidden', '=', false);
  const [rows, total] = await Promise.all([
    query
      .selectAll()
      .orderBy((eb) => eb.fn('lower', ['name']))
      .orderBy('id')
      .$call(onePage(page))
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.count };
}

/** One record of the customer's: a record of another customer is not there. */
export const addressOfCustomer = (db: Executor, table: AddressTable, customerId: string, id: string) =>
  db.selectFrom(table).selectAll().where('id', '=', id).where('customer_id', '=', customerId);
