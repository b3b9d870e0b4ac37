// The advisory lock numbers the instances of the service take on one database, in one place so that no two kinds of
// work share a number (the first-admin bootstrap and partition housekeeping once did: each made the other wait or skip).
// Any fixed numbers work; they only have to be the same in every instance.
export const ADVISORY_LOCKS = {
  /** Migrations: one instance migrates, the others wait for it. */
  migrate: 4_711_001,
  /** First-start bootstrap (the first administrator and its key). */
  bootstrap: 4_711_002,
  /** Folding the list-count deltas: one instance at a time, the others skip the round. */
  foldListCounts: 4_711_003,
  /** Month partitions and retention: one instance at a time, the others skip the step; the delivery log's prune waits for it. */
  partitions: 4_711_004,
  /** Moving the shipped year's first day on (domain/shipped-year.ts): one instance at a time, the others skip. */
  shippedYear: 4_711_005,
} as const;
