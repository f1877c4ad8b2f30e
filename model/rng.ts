// A small seeded pseudo-random generator (sfc32, from Chris Doty-Humphrey's PractRand suite, seeded
// through splitmix32) for reproducible weight init and sampling. Not for cryptography.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** `target[i] = normal() * std` for every i, in order: the same draws, about twice as fast (weight init). */
  fillNormal(target: Float32Array, std: number): void;
}

function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * normal()'s draws for target[start..] (times std), with nextU32 written out on local copies of the
 * sfc32 state so V8 keeps them in registers (nextU32's closure stores each update back to its
 * context): about 2× faster. Updates `state`; returns the pair's unused second value, if any.
 */
function fillBoxMuller(
  state: number[],
  target: Float32Array,
  start: number,
  std: number,
): number | undefined {
  let [a, b, c, d] = state as [number, number, number, number];
  const n = target.length;
  let i = start;
  let spare: number | undefined;
  while (i < n) {
    let t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (((c << 21) | (c >>> 11)) + t) >>> 0;
    if (t === 0) continue; // u = 0 is redrawn, as in normal() (log 0); the loop draws u again
    const u = t / 4294967296;
    t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (((c << 21) | (c >>> 11)) + t) >>> 0;
    const v = t / 4294967296;
    const radius = Math.sqrt(-2 * Math.log(u));
    const angle = 2 * Math.PI * v;
    target[i++] = radius * Math.cos(angle) * std;
    const second = radius * Math.sin(angle);
    if (i < n) target[i++] = second * std;
    else spare = second;
  }
  state[0] = a;
  state[1] = b;
  state[2] = c;
  state[3] = d;
  return spare;
}

/** A generator for `seed`; `stream` gives independent sequences for the same seed (e.g. one per row). */
export function createRng(seed: number, stream = 0): Rng {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  const mix = splitmix32((seed ^ Math.imul(stream + 1, 0x632be5ab)) >>> 0);
  let a = mix();
  let b = mix();
  let c = mix();
  let d = mix() | 1;
  const nextU32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) nextU32();
  let spare: number | undefined;
  const next = () => nextU32() / 4294967296;
  return {
    next,
    fillNormal(target: Float32Array, std: number) {
      let i = 0;
      if (spare !== undefined && target.length > 0) {
        target[i++] = spare * std;
        spare = undefined;
      }
      const state = [a, b, c, d];
      spare = fillBoxMuller(state, target, i, std);
      [a, b, c, d] = state as [number, number, number, number];
    },
    normal() {
      if (spare !== undefined) {
        const value = spare;
        spare = undefined;
        return value;
      }
      let u = next();
      while (u === 0) u = next();
      const v = next();
      const radius = Math.sqrt(-2 * Math.log(u));
      spare = radius * Math.sin(2 * Math.PI * v);
      return radius * Math.cos(2 * Math.PI * v);
    },
  };
}
