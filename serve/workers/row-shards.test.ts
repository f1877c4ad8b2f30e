import { describe, expect, it } from 'vitest';
import { RowShards } from './row-shards.ts';

describe('RowShards', () => {
  it('gives joining rows to the worker with the fewest, lowest index on ties', () => {
    const shards = new RowShards(3);
    expect(shards.assign(4)).toEqual([0, 1, 2, 0]);
    shards.retain([0, 1, 2]); // the engine's row 3 (worker 0's second) leaves
    expect(shards.retain([1, 2])).toEqual([[], [0], [0]]); // row 0 (worker 0) leaves
    expect(shards.assign(3)).toEqual([0, 0, 1]);
  });

  it('fills one worker up to fillRows before the next gets any, then balances', () => {
    const shards = new RowShards(2, 3);
    expect(shards.assign(4)).toEqual([0, 0, 0, 1]);
    expect(shards.assign(3)).toEqual([1, 1, 0]);
    shards.retain([0, 1, 2, 3, 4, 5]); // worker 0's fourth row leaves: 3 and 3
    shards.retain([3, 4, 5]); // worker 0's rows leave
    expect(shards.assign(2)).toEqual([0, 0]);
  });

  it('splits rows per worker in order and gathers their results back in the engine’s order', () => {
    const shards = new RowShards(2);
    const owners = shards.assign(5); // [0, 1, 0, 1, 0]
    expect(shards.split(['a', 'b', 'c', 'd', 'e'])).toEqual([
      ['a', 'c', 'e'],
      ['b', 'd'],
    ]);
    // Width 2: worker 0's rows hold 10·k, worker 1's 20·k.
    const parts = [new Float32Array([10, 10, 11, 11, 12, 12]), new Float32Array([20, 20, 21, 21])];
    expect([...shards.gather(parts, 2, owners)]).toEqual([10, 10, 20, 20, 11, 11, 21, 21, 12, 12]);
  });

  it('maps a retain to each worker’s own indices, keeping the new order', () => {
    const shards = new RowShards(2);
    shards.assign(4); // [0, 1, 0, 1]
    expect(shards.retain([3, 2, 0])).toEqual([[1, 0], [1]]);
    expect(shards.split(['x', 'y', 'z'])).toEqual([['y', 'z'], ['x']]);
    expect(() => shards.retain([3])).toThrow(RangeError);
  });
});
