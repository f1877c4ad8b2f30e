import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom, shuffled } from './seeded-random.ts';

describe('seededRandom', () => {
  it('reproduces mulberry32 as computed by an independent Python port', () => {
    // Python, 32-bit arithmetic masked by hand, seed 42: 0.6011037519201636, 0.44829055899754167, 0.8524657934904099.
    const random = seededRandom(42);
    expect([random(), random(), random()]).toEqual([
      0.6011037519201636, 0.44829055899754167, 0.8524657934904099,
    ]);
  });

  it('gives integers in range and a shuffle that is a permutation', () => {
    const random = seededRandom(7);
    const draws = Array.from({ length: 1000 }, () => randomInt(random, 6));
    expect(Math.min(...draws)).toBe(0);
    expect(Math.max(...draws)).toBe(5);
    const items = ['a', 'b', 'c', 'd', 'e'];
    const out = shuffled(items, seededRandom(3));
    expect([...out].sort()).toEqual(items);
    expect(items).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
