// The order in which the warm start sees its sequences: shuffled, but only inside consecutive windows of
// a fixed size, each window with its own seeded stream. Why not one global shuffle: with it, adding
// sequences (the demo's cap on demonstrations) reorders every batch, so a run that stops early on
// evidence (cli/demo/warm-start.ts) trains on different batches for each cap and a seed's result is not
// a property of the seed. Here the first windows are the same whatever the count; only the last,
// partial window depends on it.
import { createRng } from '../../model/rng.ts';

/** 512 steps of 8 sequences: wider than the demo's warm starts need to stop (325–2,000 steps). */
export const sftOrderWindow = 4096;

/** `items` in epoch `epoch`'s order for `seed`: a Fisher–Yates shuffle inside each window. */
export function sftOrder<T>(
  items: readonly T[],
  seed: number,
  epoch: number,
  window: number = sftOrderWindow,
): T[] {
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`window must be ≥ 1, got ${window}`);
  const out = [...items];
  for (let start = 0, index = 0; start < out.length; start += window, index++) {
    // One stream per (epoch, window): a window's order never depends on how many came before it.
    const rng = createRng(seed, epoch * 1_000_003 + index);
    const end = Math.min(start + window, out.length);
    for (let at = end - 1; at > start; at--) {
      const other = start + Math.floor(rng.next() * (at - start + 1));
      [out[at], out[other]] = [out[other] as T, out[at] as T];
    }
  }
  return out;
}
