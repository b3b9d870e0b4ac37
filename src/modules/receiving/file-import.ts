// Each partner's saved import profile (which sheet, which header row, which column holds what), and the file import
// that reads a CSV or XLSX upload with it.
import { sql, type Kysely } from 'kysely';
import type { ImportColumnMap } from '../../db/column-types.ts';
import type { DB } from '../../db/schema.ts';
import { inTransaction } from '../../db/transaction.ts';
import { recordHistory } from '../../domain/history.ts';
import type { Actor } from '../../http/auth.ts';
import { badRequest, forbidden, invalidRequest, notFound } from '../../domain/errors.ts';
import { normalizeItemNumber } from '../items/queries.ts';
import { writeImport, type ImportRow, type SkippedRow } from './import.ts';
import type { PROFILE_FIELDS } from './schemas.ts';
import { serializeProfile } from './serialize.ts';
import { MAX_DATA_ROWS, readRows, type Cell, type FileKind, type Sheet } from './spreadsheet.ts';

type Field = (typeof PROFILE_FIELDS)[number];

export interface ProfileInput {
  sheet_name?: string | null;
  header_row: number;
  column_map: ImportColumnMap;
}

const headerKey = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

/** Another partner's profile reads as missing for a scoped key. */
function assertProfileScope(actor: Actor, manufacturerId: string): void {
  if (actor.manufacturerId && actor.manufacturerId !== manufacturerId) throw notFound('import profile');
}

export async function getProfile(db: Kysely<DB>, actor: Actor, manufacturerId: string) {
  assertProfileScope(actor, manufacturerId);
  const row = await db.selectFrom('receiving_import_profiles').selectAll().where('manufacturer_id', '=', manufacturerId).executeTakeFirst();
  if (!row) throw notFound('import profile');
  return serializeProfile(row);
}

export async function putProfile(db: Kysely<DB>, actor: Actor, manufacturerId: string, input: ProfileInput) {
  assertProfileScope(actor, manufacturerId);
  const columns = Object.entries(input.column_map as Record<string, string>).map(([field, header]) => [field, header.trim()] as const);
  const headers = columns.map(([, header]) => headerKey(header));
  if (new Set(headers).size !== headers.length) throw invalidRequest('column_map names the same header for two fields');
  return inTransaction(db, async (tx) => {
    const partner = await tx.selectFrom('manufacturers').select('id').where('id', '=', manufacturerId).executeTakeFirst();
    if (!partner) throw notFound('manufacturer');
    const before = await tx.selectFrom('receiving_import_profiles').selectAll().where('manufacturer_id', '=', manufacturerId).forUpdate().executeTakeFirst();
    const values = {
      sheet_name: input.sheet_name?.trim() || null,
      header_row: input.header_row,
      column_map: JSON.stringify(Object.fromEntries(columns)),
      updated_by: actor.userId,
      updated_at: sql<Date>`now()`,
    };
    const row = await tx.insertInto('receiving_import_profiles').values({ manufacturer_id: manufacturerId, ...values })
      .onConflict((oc) => oc.column('manufacturer_id').doUpdateSet(values))
      .returningAll().executeTakeFirstOrThrow();
    const profile = serializeProfile(row);
    await recordHistory(tx, actor, {
      entityType: 'receiving_import_profile', entityId: manufacturerId, action: before ? 'updated' : 'created',
      manufacturerId, before: before ? serializeProfile(before) : undefined, after: profile,
    });
    return profile;
  });
}

export async function deleteProfile(db: Kysely<DB>, actor: Actor, manufacturerId: string): Promise<void> {
  assertProfileScope(actor, manufacturerId);
  await inTransaction(db, async (tx) => {
    const removed = await tx.deleteFrom('receiving_import_profiles').where('manufacturer_id', '=', manufacturerId).returningAll().executeTakeFirst();
    if (!removed) throw notFound('import profile');
    await recordHistory(tx, actor, { entityType: 'receiving_import_profile', entityId: manufacturerId, action: 'deleted', manufacturerId, before: serializeProfile(removed) });
  });
}

const text = (cell: Cell | undefined) => (cell === null || cell === undefined ? '' : String(cell).trim());

function quantity(cell: Cell | undefined): number | null {
  const value = typeof cell === 'number' ? cell : /^\d+$/.test(text(cell)) ? Number(text(cell)) : NaN;
  return Number.isInteger(value) && value >= 1 && value <= 100_000_000 ? value : null;
}

function cost(cell: Cell | undefined): number | null | undefined {
  if (text(cell) === '') return null;
  const value = typeof cell === 'number' ? cell : /^\d+(\.\d+)?$/.test(text(cell)) ? Number(text(cell)) : NaN;
  return Number.isFinite(value) && value >= 0 && value <= 99_999_999 ? value : undefined;
}

/**
 * The data rows under the header, as import rows; a value that breaks a rule fails the whole file (400). `index` (and
 * `row` in the 400's details) is the row in the file: the sheet's row, or the CSV line the row starts on.
 */
function rowsFromSheet({ rows: sheet, lines }: Sheet, profile: { header_row: number; column_map: ImportColumnMap }): ImportRow[] {
  if (profile.header_row > sheet.length) {
    throw badRequest(`the profile's header row ${profile.header_row} is past the end of the file (${sheet.length} rows)`);
  }
  const header = sheet[profile.header_row - 1]!.map((cell) => headerKey(text(cell)));
  const column = {} as Record<Field, number>;
  for (const [field, title] of Object.entries(profile.column_map) as [Field, string][]) {
    const at = header.indexOf(headerKey(title));
    if (at < 0) throw badRequest(`row ${profile.header_row} has no column "${title}" (the profile's ${field} column)`);
    // Which of two columns of the same name was meant cannot be told.
    if (header.indexOf(headerKey(title), at + 1) >= 0) throw badRequest(`row ${profile.header_row} has two columns "${title}" (the profile's ${field} column)`);
    column[field] = at;
  }
  const rows: ImportRow[] = [];
  const problems: { row: number; message: string }[] = [];
  sheet.slice(profile.header_row).forEach((cells, i) => {
    const index = lines[profile.header_row + i]!;
    const at = (field: Field) => (column[field] === undefined ? undefined : cells[column[field]]);
    if (Object.values(column).every((c) => text(cells[c]) === '')) return;
    const qty = quantity(at('qty'));
    const unitCost = cost(at('cost'));
    const ref = text(at('ref'));
    if (qty === null) problems.push({ row: index, message: `qty "${text(at('qty'))}" is not a whole number from 1 to 100000000` });
    if (unitCost === undefined) problems.push({ row: index, message: `cost "${text(at('cost'))}" is not a number from 0 to 99999999` });
    if (ref.length > 100) problems.push({ row: index, message: 'ref is longer than 100 characters' });
    rows.push({ index, itemRef: text(at('item')), itemId: null, qty_received: qty ?? 0, reference_number: ref || null, new_unit_cost: unitCost ?? null, uom: text(at('uom')) || null });
  });
  if (problems.length) throw badRequest(`${problems.length} row(s) hold invalid values; nothing was imported`, problems.slice(0, 100));
  if (!rows.length) throw badRequest('the file has no data rows below the header');
  if (rows.length > MAX_DATA_ROWS) throw badRequest(`the file has more than ${MAX_DATA_ROWS} data rows`);
  return rows;
}

/** Item numbers (normalized) and aliases of the partner -> item ids; a number two items share is ambiguous. */
async function resolveItemNumbers(db: Kysely<DB>, manufacturerId: string, numbers: string[]): Promise<Map<string, string | 'ambiguous'>> {
  const found = new Map<string, string | 'ambiguous'>();
  if (!numbers.length) return found;
  const [items, aliases] = await Promise.all([
    db.selectFrom('items').select(['id', 'item_number_normalized as n']).where('manufacturer_id', '=', manufacturerId).where('item_number_normalized', 'in', numbers).execute(),
    db.selectFrom('item_aliases').select(['item_id as id', 'alias_normalized as n']).where('manufacturer_id', '=', manufacturerId).where('alias_normalized', 'in', numbers).execute(),
  ]);
  // Item numbers first: an alias never hides an item's own number.
  for (const { id, n } of items) found.set(n, found.has(n) && found.get(n) !== id ? 'ambiguous' : id);
  for (const { id, n } of aliases) if (!found.has(n)) found.set(n, id);
  return found;
}

export async function importFile(db: Kysely<DB>, actor: Actor, manufacturerId: string, bytes: Buffer, kind: FileKind) {
  if (actor.manufacturerId && actor.manufacturerId !== manufacturerId) throw forbidden('a partner-scoped key imports only for its own supply partner');
  const profile = await db.selectFrom('receiving_import_profiles').selectAll().where('manufacturer_id', '=', manufacturerId).executeTakeFirst();
  if (!profile) throw invalidRequest('this supply partner has no import profile: PUT /api/v1/receiving/import-profiles/{manufacturerId} first');
  const sheet = await readRows(bytes, kind, kind === 'xlsx' ? profile.sheet_name : null);
  const rows = rowsFromSheet(sheet, { header_row: profile.header_row, column_map: profile.column_map });
  const skipped: SkippedRow[] = [];
  const numbers = new Map(rows.map((r) => [r, normalizeItemNumber(r.itemRef)]));
  const resolved = await resolveItemNumbers(db, manufacturerId, [...new Set(numbers.values())].filter(Boolean));
  const usable = rows.filter((row) => {
    const match = resolved.get(numbers.get(row)!);
    if (!numbers.get(row)) skipped.push({ index: row.index, reason: 'the item number is empty', item_id: row.itemRef });
    else if (match === 'ambiguous') skipped.push({ index: row.index, reason: 'the item number matches several items', item_id: row.itemRef });
    else if (!match) skipped.push({ index: row.index, reason: 'unknown item number', item_id: row.itemRef });
    else row.itemId = match;
    return !!row.itemId;
  });
  return inTransaction(db, (tx) => writeImport(tx, actor, { manufacturer_id: manufacturerId }, usable, skipped, kind));
}
