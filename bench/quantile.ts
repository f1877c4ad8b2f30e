/**
 * The q-quantile of `values` by linear interpolation between the two nearest ranks (Hyndman & Fan's
 * definition 7, the default of R's `quantile` and NumPy's `percentile`). NaN for no values.
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const below = sorted[low] as number;
  return below + ((sorted[high] as number) - below) * (position - low);
}
