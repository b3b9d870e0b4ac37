// Figures the bench sections share.

/** The p-th percentile (0-100) of the values, nearest rank; the values are not reordered. */
export const percentile = (values: number[], p: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;
