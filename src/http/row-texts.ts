// The JSON text of list rows, kept in the process under the version of the database rows they were made from, so that
// a page whose rows have not changed since they were last answered is made from their text: its statement then reads
// each row's id and version instead of its 19 columns, and the page is not serialized again. Reading the parsed rows
// and serializing them was half of a list's CPU in the service (docs/decisions.md, "Row texts").
//
// Not a cache of answers: every request still reads its page (which rows, in which order, the total) from the database,
// in one statement, and a row's text is used only when the row's version is the one the text was made from. A version
// is what PostgreSQL writes into every new row version: `xmin` (the writing transaction) and `ctid` (where the version
// lies), of the row and of each joined row its text shows. Any write makes a new version, so a changed row is read
// whole again and its text made anew.
import { sql, type RawBuilder } from 'kysely';

/** The version of the rows of `tables` (aliases in the statement) as one text: their xmin and ctid. */
export function versionOf(...tables: string[]): RawBuilder<string> {
  return sql<string>`concat_ws(':', ${sql.join(tables.map((table) => sql`${sql.ref(`${table}.xmin`)}, ${sql.ref(`${table}.ctid`)}`))})`;
}

/** Texts kept per generation; at most two generations are kept (~1.1 KB a text: ~22 MB in all). */
export const GENERATION_ROWS = 10_000;

/**
 * Texts by row id and version, one per process; each list has its own key space (`list`), since its rows' texts
 * differ. Kept in two generations: when the newer is full it becomes the older, and the older is dropped whole; a text
 * found in the older moves to the newer. So the texts still read stay, and dropping costs nothing per text (a Map
 * emptied from its oldest end, one text at a time, walks over every hole its deletions left until it is rebuilt: it
 * made the bench's varied q= pages a third slower).
 */
export class RowTexts {
  #newer = new Map<string, string>();
  #older = new Map<string, string>();

  get(list: string, id: string, version: string): string | undefined {
    const key = `${list}|${id}|${version}`;
    const text = this.#newer.get(key);
    if (text !== undefined) return text;
    const old = this.#older.get(key);
    if (old !== undefined) this.#keep(key, old);
    return old;
  }

  set(list: string, id: string, version: string, text: string): void {
    this.#keep(`${list}|${id}|${version}`, text);
  }

  #keep(key: string, text: string): void {
    if (this.#newer.size >= GENERATION_ROWS) {
      this.#older = this.#newer;
      this.#newer = new Map();
    }
    this.#newer.set(key, text);
  }
}

/** A row as the page's first statement reads it: its id and version. */
export interface Versioned {
  id: string;
  version: string;
}

/**
 * A page's rows as texts: the rows whose text is known at the version the page read, and the others read by id, whole.
 * Null when one of those was written since (its version is not the page's): the caller then reads the page again whole,
 * so that every answer is one snapshot's. `list` names the rows' kind (their texts differ from list to list).
 */
export async function textsOfPage<R extends Versioned>(
  texts: RowTexts, list: string, page: Versioned[], readById: (ids: string[]) => Promise<R[]>, toText: (row: R) => string,
): Promise<string[] | null> {
  const known = page.map((row) => texts.get(list, row.id, row.version));
  const missing = page.filter((_row, i) => known[i] === undefined);
  if (missing.length === 0) return known as string[];
  const read = new Map((await readById(missing.map((row) => row.id))).map((row) => [row.id, row]));
  if (!missing.every((row) => read.get(row.id)?.version === row.version)) return null;
  return page.map((row, i) => known[i] ?? textKept(texts, list, read.get(row.id)!, toText));
}

/** The texts of rows read whole, kept for the next page that shows them at the same version. */
export function textsOfRows<R extends Versioned>(texts: RowTexts, list: string, rows: R[], toText: (row: R) => string): string[] {
  return rows.map((row) => textKept(texts, list, row, toText));
}

function textKept<R extends Versioned>(texts: RowTexts, list: string, row: R, toText: (row: R) => string): string {
  const text = toText(row);
  texts.set(list, row.id, row.version, text);
  return text;
}
