import { describe, expect, it } from 'vitest';
import { shardSequences } from './shard-sequences.ts';

const tokens = (lengths: number[], shard: number[]) =>
  shard.reduce((sum, i) => sum + (lengths[i] as number), 0);

describe('shardSequences', () => {
  it('gives every sequence to exactly one worker', () => {
    const lengths = [5, 300, 17, 17, 90, 2, 64, 64, 128, 1];
    const shards = shardSequences(lengths, 3);
    expect(shards.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
  });

  it('balances tokens within the longest sequence (LPT bound: max load ≤ mean + longest)', () => {
    const lengths = Array.from({ length: 40 }, (_, i) => 20 + ((i * 7919) % 230));
    for (const workers of [2, 3, 4]) {
      const loads = shardSequences(lengths, workers).map((shard) => tokens(lengths, shard));
      const mean = lengths.reduce((a, b) => a + b, 0) / workers;
      expect(Math.max(...loads)).toBeLessThanOrEqual(mean + Math.max(...lengths));
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(Math.max(...lengths));
    }
  });

  it('leaves workers empty when there are fewer sequences, and one worker gets everything', () => {
    expect(shardSequences([10, 20], 4).map((shard) => shard.length)).toEqual([1, 1, 0, 0]);
    expect(shardSequences([3, 1, 2], 1)).toEqual([[0, 2, 1]]);
  });

  it('refuses a worker count below 1', () => {
    expect(() => shardSequences([1], 0)).toThrow(RangeError);
  });
});
