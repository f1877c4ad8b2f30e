// The stability measure of a learning curve: after a burn-in, how far any point falls below
// the best point before it. Pure.

/**
 * The largest `best so far − value` over `values[from…]` (0 when nothing falls), with the best taken
 * over every earlier value, the burn-in's included. `from` 4 reads "after the fourth round".
 */
export function largestFallBelowBest(values: readonly number[], from: number): number {
  let best = Number.NEGATIVE_INFINITY;
  let largest = 0;
  values.forEach((value, index) => {
    best = Math.max(best, value);
    if (index >= from) largest = Math.max(largest, best - value);
  });
  return largest;
}
