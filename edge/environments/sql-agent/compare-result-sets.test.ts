import { describe, expect, it } from 'vitest';
import { compareResultSets } from './compare-result-sets.ts';

describe('compareResultSets', () => {
  it('ignores row order unless asked, and treats rows as a multiset', () => {
    // Neither side sorted, in different orders: the comparison must sort both.
    const expected = [
      ['b', 2],
      ['c', 3],
      ['a', 1],
    ];
    const shuffled = [
      ['c', 3],
      ['a', 1],
      ['b', 2],
    ];
    expect(compareResultSets(expected, shuffled, { ordered: false })).toEqual({ equal: true });
    expect(compareResultSets(expected, shuffled, { ordered: true })).toEqual({
      equal: false,
      reason: 'row 1 differs: expected ["s:b","n:2"], got ["s:c","n:3"]',
    });
    // Same rows as sets, different counts: a, a, b is not a, b, b.
    const twice = compareResultSets([['a'], ['a'], ['b']], [['a'], ['b'], ['b']], { ordered: false });
    expect(twice.equal).toBe(false);
  });

  it('matches values across driver representations', () => {
    // pg returns numeric and bigint as strings; the task stores JSON numbers; dates may be Date objects.
    const actual = [['Ada', '159.99', '5', new Date('2024-01-04T00:00:00.000Z'), null]];
    const expected = [['Ada', 159.99, 5, '2024-01-04', null]];
    expect(compareResultSets(expected, actual, { ordered: true })).toEqual({ equal: true });
    // avg() as numeric text vs float8: 33.3333333333333333 and 100/3 agree to 9 significant digits.
    expect(compareResultSets([[100 / 3]], [['33.3333333333333333']], { ordered: true })).toEqual({
      equal: true,
    });
    expect(compareResultSets([[209.46]], [['209.47']], { ordered: true }).equal).toBe(false);
    expect(compareResultSets([['5']], [[5n]], { ordered: true })).toEqual({ equal: true });
    expect(compareResultSets([[null]], [['null']], { ordered: true }).equal).toBe(false);
  });

  it('names a wrong shape', () => {
    expect(compareResultSets([['a', 1]], [['a']], { ordered: false })).toEqual({
      equal: false,
      reason: 'expected 2 columns, got 1',
    });
    expect(compareResultSets([['a'], ['b']], [['a']], { ordered: false })).toEqual({
      equal: false,
      reason: 'expected 2 rows, got 1',
    });
    expect(compareResultSets([], [], { ordered: true })).toEqual({ equal: true });
  });
});
