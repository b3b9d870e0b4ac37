// Customers (global records) and their two address books: drop-ship locations and third-party freight payers.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, DropShipLocationsTable, ThirdPartyPayersTable } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import type { Actor } from '../../http/auth.ts';
import { ApiError, notFound } from '../../domain/errors.ts';
import type { Page } from '../../http/pagination.ts';
import {
  addressRecord, assertValidAddress, DROP_SHIP_LOCATION, THIRD_PARTY_PAYER, type AddressInput, type AddressKind, type AddressRecord,
} from './address-rules.ts';
import { addressOfCustomer, customerById, listAddresses, listCustomers as queryCustomers, type AddressTable, type CustomerFilter } from './queries.ts';
import { serializeCustomer, serializeDropShipLocation, serializeThirdPartyPayer } from './serialize.ts';

/** Trimmed; an empty string or null clears. */
const clearable = (value: string | null | undefined) => (value === undefined ? undefined : value?.trim() || null);
const STATE_MAX = 40;

/** The state as stored: uppercase, and still within its length once uppercased ('ß' becomes 'SS'). */
function storedState(value: string | null | undefined) {
  const cleared = clearable(value);
  const state = typeof cleared === 'string' ? cleared.toUpperCase() : cleared;
  if (state && state.length > STATE_MAX) throw new ApiError(400, 'bad_request', `body/state must NOT have more than ${STATE_MAX} characters once uppercased`);
  return state;
}

export async function listCustomers(db: Kysely<DB>, filter: CustomerFilter, page: Page) {
  const { rows, total } = await queryCustomers(db, filter, page);
  return { rows: rows.map(serializeCustomer), total };
}

export async function getCustomer(db: Kysely<DB>, id: string) {
  const row = await customerById(db, id).executeTakeFirst();
  if (!row) throw notFound('customer');
  return serializeCustomer(row);
}

interface CustomerFields {
  customer_type_code?: string | null;
  region?: string | null;
  address_line_1?: string | null;
  address_line_2?: string | null;
  city?: string | null;
  state?: string | null;
  zip_code?: string | null;
}

const customerColumns = (input: CustomerFields) => ({
  customer_type_code: clearable(input.customer_type_code),
  region: clearable(input.region),
  address_line_1: clearable(input.address_line_1),
  address_line_2: clearable(input.address_line_2),
  city: clearable(input.city),
  state: storedState(input.state),
  zip_code: clearable(input.zip_code),
});

export async function createCustomer(db: Kysely<DB>, actor: Actor, input: CustomerFields & { account_number: string; name: string }) {
  return inTransaction(db, async (tx) => {
    const columns = customerColumns(input);
    const row = await tx
      .insertInto('customers')
      .values({
        account_number: input.account_number.trim(),
        name: input.name.trim(),
        customer_type_code: columns.customer_type_code ?? null,
        region: columns.region ?? null,
        address_line_1: columns.address_line_1 ?? null,
        address_line_2: columns.address_line_2 ?? null,
        city: columns.city ?? null,
        state: columns.state ?? null,
        zip_code: columns.zip_code ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const customer = serializeCustomer(row);
    await recordHistory(tx, actor, { entityType: 'customer', entityId: row.id, action: 'created', after: customer });
    return customer;
  });
}

export async function updateCustomer(db: Kysely<DB>, actor: Actor, id: string, changes: CustomerFields & { name: string }) {
  return inTransaction(db, async (tx) => {
    const before = await customerById(tx, id).forUpdate().executeTakeFirst();
    if (!before) throw notFound('customer');
    const after = await tx
      .updateTable('customers')
      .set({ name: changes.name.trim(), ...customerColumns(changes), updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const customer = serializeCustomer(after);
    await recordHistory(tx, actor, { entityType: 'customer', entityId: id, action: 'updated', before: serializeCustomer(before), after: customer });
    return customer;
  });
}

/** A customer's address book: its table, its rules and its response shape. */
interface AddressBook<Row, Shape> {
  table: AddressTable;
  kind: AddressKind;
  serialize: (row: Row) => Shape;
}

export const DROP_SHIP_LOCATIONS: AddressBook<Selectable<DropShipLocationsTable>, ReturnType<typeof serializeDropShipLocation>> = {
  table: 'drop_ship_locations', kind: DROP_SHIP_LOCATION, serialize: serializeDropShipLocation,
};
export const THIRD_PARTY_PAYERS: AddressBook<Selectable<ThirdPartyPayersTable>, ReturnType<typeof serializeThirdPartyPayer>> = {
  table: 'third_party_payers', kind: THIRD_PARTY_PAYER, serialize: serializeThirdPartyPayer,
};

// The queries run on a table chosen at run time: the book says which row type it has, and the rules (address-rules.ts)
// name exactly its columns, so the record written is the table's.
const asRow = <Row>(_book: AddressBook<Row, unknown>, row: unknown) => row as Row;

async function assertCustomerExists(db: Kysely<DB> | Transaction<DB>, customerId: string): Promise<void> {
  if (!(await customerById(db, customerId).executeTakeFirst())) throw notFound('customer');
}

export async function listAddressBook<Row, Shape>(
  db: Kysely<DB>, book: AddressBook<Row, Shape>, customerId: string, includeHidden: boolean, page: Page,
) {
  await assertCustomerExists(db, customerId);
  const { rows, total } = await listAddresses(db, book.table, customerId, includeHidden, page);
  return { rows: rows.map((row) => book.serialize(asRow(book, row))), total };
}

export async function addToAddressBook<Row, Shape>(db: Kysely<DB>, actor: Actor, book: AddressBook<Row, Shape>, customerId: string, input: AddressInput) {
  return inTransaction(db, async (tx) => {
    await assertCustomerExists(tx, customerId);
    const record = assertValidAddress(book.kind, addressRecord(book.kind, input));
    const row = await tx.insertInto(book.table).values({ ...record, customer_id: customerId } as never).returningAll().executeTakeFirstOrThrow();
    const shape = book.serialize(asRow(book, row));
    await recordHistory(tx, actor, { entityType: book.kind.entityType, entityId: row.id, action: 'created', after: shape });
    return shape;
  });
}

export async function updateAddressBook<Row, Shape>(
  db: Kysely<DB>, actor: Actor, book: AddressBook<Row, Shape>, customerId: string, id: string, input: AddressInput,
) {
  return inTransaction(db, async (tx) => {
    await assertCustomerExists(tx, customerId);
    const before = await addressOfCustomer(tx, book.table, customerId, id).forUpdate().executeTakeFirst();
    if (!before) throw notFound(book.kind.entityType.replaceAll('_', ' '));
    const record = assertValidAddress(book.kind, addressRecord(book.kind, input, before as unknown as AddressRecord));
    const after = await tx
      .updateTable(book.table)
      .set({ ...record, updated_at: new Date() } as never)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const shape = book.serialize(asRow(book, after));
    await recordHistory(tx, actor, { entityType: book.kind.entityType, entityId: id, action: 'updated', before: book.serialize(asRow(book, before)), after: shape });
    return shape;
  });
}

/** Hiding takes the record out of order-entry pickers; hiding a hidden record changes nothing and answers the same. */
export async function hideInAddressBook<Row, Shape>(db: Kysely<DB>, actor: Actor, book: AddressBook<Row, Shape>, customerId: string, id: string) {
  return inTransaction(db, async (tx) => {
    await assertCustomerExists(tx, customerId);
    const before = await addressOfCustomer(tx, book.table, customerId, id).forUpdate().executeTakeFirst();
    if (!before) throw notFound(book.kind.entityType.replaceAll('_', ' '));
    if (before.is_hidden) return book.serialize(asRow(book, before));
    const after = await tx
      .updateTable(book.table)
      .set({ is_hidden: true, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordHistory(tx, actor, { entityType: book.kind.entityType, entityId: id, action: 'hidden', before: { is_hidden: false }, after: { is_hidden: true } });
    return book.serialize(asRow(book, after));
  });
}
