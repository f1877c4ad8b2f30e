import { describe, expect, it } from 'vitest';
import { mulberry32, seededShuffle } from './shuffle.ts';

describe('mulberry32', () => {
  it('matches an independent unsigned-arithmetic reimplementation (Python, exact floats)', () => {
    // Reference: the same algorithm written with explicit `& 0xffffffff` masks in Python 3 ints,
    // outputs divided by 2**32. Exact equality: both sides compute the same 32-bit integers.
    const zero = mulberry32(0);
    expect([zero(), zero(), zero()]).toEqual([
      0.26642920868471265, 0.0003297457005828619, 0.2232720274478197,
    ]);
    const fortyTwo = mulberry32(42);
    expect([fortyTwo(), fortyTwo(), fortyTwo()]).toEqual([
      0.6011037519201636, 0.44829055899754167, 0.8524657934904099,
    ]);
    const big = mulberry32(0xdeadbeef);
    expect([big(), big()]).toEqual([0.9413696140982211, 0.26719574979506433]);
  });
});

describe('seededShuffle', () => {
  const items = Array.from({ length: 8 }, (_, index) => index);

  it('returns a permutation and leaves the input alone', () => {
    const shuffled = seededShuffle(items, mulberry32(7));
    expect([...shuffled].sort((a, b) => a - b)).toEqual(items);
    expect(items).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('is reproducible from its seed and differs across seeds', () => {
    expect(seededShuffle(items, mulberry32(7))).toEqual(seededShuffle(items, mulberry32(7)));
    const orders = new Set(
      Array.from({ length: 20 }, (_, seed) => seededShuffle(items, mulberry32(seed)).join()),
    );
    // 20 draws from 8! = 40,320 orders: a repeat would be a bug-sized coincidence.
    expect(orders.size).toBe(20);
  });

  it('applies Fisher–Yates swaps with the generator values (hand-traced for 3 items, seed 0)', () => {
    // Draws for seed 0: 0.26643, 0.00033 (see above).
    // i=2: j = floor(0.26643·3) = 0 → swap [0,1,2][2]↔[0] → [2,1,0]
    // i=1: j = floor(0.00033·2) = 0 → swap [1]↔[0]        → [1,2,0]
    expect(seededShuffle([0, 1, 2], mulberry32(0))).toEqual([1, 2, 0]);
  });

  it('puts each item in each position about equally often', () => {
    // 4 items, 40,000 shuffles: each cell expects 10,000; binomial sd = sqrt(40000·¼·¾) ≈ 87, so a
    // ±500 band (≈ 5.8 sd) fails only for a biased shuffle.
    const random = mulberry32(123);
    const counts = Array.from({ length: 4 }, () => [0, 0, 0, 0]);
    for (let round = 0; round < 40_000; round++) {
      seededShuffle([0, 1, 2, 3], random).forEach((item, position) => {
        const row = counts[item] as number[];
        row[position] = (row[position] ?? 0) + 1;
      });
    }
    for (const row of counts) for (const cell of row) expect(Math.abs(cell - 10_000)).toBeLessThan(500);
  });
});
