// Values of a closed set (statuses, kinds, stock-filter bounds) written into a statement as literals. Each set of them
// is its own prepared statement whose plan knows the values: a partial index's predicate can be proved from them, and
// the plan is the same for every execution, so PostgreSQL keeps it instead of planning the statement on every request.
// Only for values validated against their enum (or constants of the code): a literal from user text would make every
// request a statement of its own.
import { sql, type RawBuilder } from 'kysely';

/**
 * `column in ('a', 'b')` with the values as literals, each once and sorted: a request naming them in another order or
 * twice must not make a statement of its own.
 */
export function inLiterals(column: string, values: readonly string[]): RawBuilder<boolean> {
  if (values.length === 0) throw new Error(`inLiterals: no values for ${column}`);
  return sql<boolean>`${sql.ref(column)} in (${sql.join(closedSet(values).map((value) => sql.lit(value)))})`;
}

/** The values each once, sorted: the same set always writes the same statement. */
export const closedSet = <T extends string>(values: readonly T[]): T[] => [...new Set(values)].sort();
