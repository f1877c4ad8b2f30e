// Holm's step-down adjustment of p-values for several comparisons with one control (Holm 1979,
// "A simple sequentially rejective multiple test procedure"). With p-values sorted ascending,
// p₍ᵢ₎ becomes max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎); rejecting where the adjusted value is
// below α keeps the family-wise error rate at α, and is never less powerful than Bonferroni.

/** Adjusted p-values, in the order given. NaN inputs stay NaN and do not count towards m. */
export function holmAdjust(pValues: readonly number[]): number[] {
  const order = pValues
    .map((p, index) => ({ p, index }))
    .filter((entry) => !Number.isNaN(entry.p))
    .sort((a, b) => a.p - b.p);
  const m = order.length;
  const adjusted = pValues.map(() => Number.NaN);
  let running = 0;
  order.forEach((entry, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * entry.p));
    adjusted[entry.index] = running;
  });
  return adjusted;
}
