// A small seeded pseudo-random generator for task samplers: the same seed gives the same tasks in
// Node, workerd and tests. Not for anything security-related.

/** A function returning floats in [0, 1), deterministic for a given seed. */
export type Random = () => number;

/**
 * mulberry32 (Tommy Ettinger, public domain): a 32-bit state generator, good enough to draw task
 * parameters and far smaller than anything cryptographic.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}

/** Fisher–Yates shuffle of a copy (Knuth, TAOCP vol. 2, Algorithm P). */
export function shuffled<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
