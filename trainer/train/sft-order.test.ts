import { describe, expect, it } from 'vitest';
import { sftOrder } from './sft-order.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('sftOrder', () => {
  it('permutes every item once, each inside its own window', () => {
    const order = sftOrder(range(25), 7, 1, 10);
    expect([...order].sort((a, b) => a - b)).toEqual(range(25));
    expect(order.map((item) => Math.floor(item / 10))).toEqual(range(25).map((at) => Math.floor(at / 10)));
    expect(order).not.toEqual(range(25));
  });

  it('keeps the first windows in the same order whatever the count (the demo cap reorders nothing)', () => {
    const fewer = sftOrder(range(30), 3, 1, 10);
    const more = sftOrder(range(47), 3, 1, 10);
    expect(more.slice(0, 30)).toEqual(fewer);
  });

  it('differs by seed and by epoch', () => {
    const base = sftOrder(range(40), 3, 1, 40);
    expect(sftOrder(range(40), 4, 1, 40)).not.toEqual(base);
    expect(sftOrder(range(40), 3, 2, 40)).not.toEqual(base);
    expect(sftOrder(range(40), 3, 1, 40)).toEqual(base);
  });

  it('refuses a window below one', () => {
    expect(() => sftOrder(range(3), 1, 1, 0)).toThrow(RangeError);
  });
});
