// An array parameter whose length the planner does not see. PostgreSQL plans a prepared statement for its values five
// times, then keeps the generic plan only when that costs no more than the custom ones did. A custom plan sees the
// array (one element: one index probe), the generic one assumes ten elements, so a statement that mostly gets one or
// two (a stock change of one line) was planned on every call. Read through a sub-select (an InitPlan), the array is as
// unknown to the custom plan as to the generic one: both estimate alike, and from the sixth call the connection keeps
// the generic plan, which is the same nested loop of index probes.
import { sql, type RawBuilder } from 'kysely';

type ElementType = 'uuid' | 'int' | 'boolean';

/** `values` as an array of `type` for `= any(...)` or `unnest(...)`, of a length the plan does not depend on. */
export function unsizedArray<T>(values: readonly T[], type: ElementType): RawBuilder<T[]> {
  const array = sql.raw(`${type}[]`);
  return sql<T[]>`(select ${values}::${array})::${array}`;
}
