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

/** At most this many rows' texts per process (~1.1 KB each for an item: ~22 MB). */
const MAX_ROWS = 20_000;

/**
 * Texts by row id and version. When full, the oldest text is dropped: a row still read has its text made again on its
 * next read. One per process; each list has its own key space (`list`), since its rows' texts differ.
 */
export class RowTexts {
  readonly #texts = new Map<string, string>();

  get(list: string, id: string, version: string): string | undefined {
    return this.#texts.get(`${list}|${id}|${version}`);
  }

  set(list: string, id: string, version: string, text: string): void {
    if (this.#texts.size >= MAX_ROWS) this.#texts.delete(this.#texts.keys().next().value!);
    this.#texts.set(`${list}|${id}|${version}`, text);
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
  return page.map((row, i) => known[i] ?? textsOfRows(texts, list, [read.get(row.id)!], toText)[0]!);
}

/** The texts of rows read whole, kept for the next page that shows them at the same version. */
export function textsOfRows<R extends Versioned>(texts: RowTexts, list: string, rows: R[], toText: (row: R) => string): string[] {
  return rows.map((row) => {
    const text = toText(row);
    texts.set(list, row.id, row.version, text);
    return text;
  });
}
