import { describe, expect, it } from 'vitest';
import { splitOf } from './split-of.ts';

describe('splitOf', () => {
  it('sends about the asked share of ids to eval, always the same way', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `task-${i}`);
    const share = ids.filter((id) => splitOf(id, 0.2) === 'eval').length / ids.length;
    // Binomial: σ = √(0.2 · 0.8 / 10000) = 0.004; allow 5σ.
    expect(Math.abs(share - 0.2)).toBeLessThan(0.02);
    expect(ids.map((id) => splitOf(id, 0.2))).toEqual(ids.map((id) => splitOf(id, 0.2)));
  });

  it('carves validation from the low end, leaving train as it was with the same held-out share', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => `task-${i}`);
    const three = ids.map((id) => splitOf(id, 0.15, 0.05));
    const two = ids.map((id) => splitOf(id, 0.2));
    // Train is the same set; what was eval is now validation or eval.
    three.forEach((split, i) => {
      expect(split === 'train').toBe(two[i] === 'train');
    });
    const validationShare = three.filter((split) => split === 'validation').length / ids.length;
    // Binomial: σ = √(0.05 · 0.95 / 10000) ≈ 0.0022; allow 5σ.
    expect(Math.abs(validationShare - 0.05)).toBeLessThan(0.011);
    expect(ids.every((id) => splitOf(id, 0.2, 0) !== 'validation')).toBe(true);
  });

  it('rejects a fraction outside (0, 1)', () => {
    expect(() => splitOf('x', 0)).toThrow(/evalFraction must be strictly between 0 and 1, got 0/);
    expect(() => splitOf('x', 1.5)).toThrow(RangeError);
    expect(() => splitOf('x', 0.5, 0.5)).toThrow(/leave train a share/);
    expect(() => splitOf('x', 0.5, -0.1)).toThrow(RangeError);
  });
});
