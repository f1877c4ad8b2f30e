// Seeded randomness for RULER's trajectory order: a 32-bit PRNG and a Fisher–Yates shuffle. Pure and
// reproducible from the seed; not for anything security-related.
//
// mulberry32: Tommy Ettinger's 32-bit generator (public domain, 2017), as catalogued in bryc's
// "PRNGs.md" (github.com/bryc/code/blob/master/jshash/PRNGs.md). One 32-bit state word, period 2^32,
// passes gjrand/PractRand for the small stream lengths a shuffle needs.
// Shuffle: Durstenfeld's in-place Fisher–Yates (Knuth, TAOCP vol. 2, §3.4.2, Algorithm P).

/** A generator of floats in [0, 1); every call advances the state. */
export type Random = () => number;

export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniformly random integer in [0, bound). */
export function randomInt(random: Random, bound: number): number {
  return Math.floor(random() * bound);
}

/** A shuffled copy of `items`; the input is left untouched. */
export function seededShuffle<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(random, i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
