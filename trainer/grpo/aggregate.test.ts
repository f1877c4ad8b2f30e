import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { aggregations, sequenceMean, stepNormaliser, tokenMean } from './aggregate.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

const values = [
  [1, 2, 3, 4],
  [10, 20, 30, 40],
  [5, 5, 5, 5],
];
const mask = [
  [1, 1, 0, 0],
  [1, 1, 1, 0],
  [0, 0, 0, 0], // a sequence without trained tokens
];

function scalar(f: () => tf.Scalar): number {
  return tf.tidy(() => f().dataSync()[0] as number);
}

describe('aggregations', () => {
  it('token-mean: Σ L·m / Σ m over the micro-batch, or over the step when given', () => {
    // (1 + 2 + 10 + 20 + 30) / 5 = 63 / 5 = 12.6
    expect(scalar(() => tokenMean(tf.tensor2d(values), tf.tensor2d(mask)))).toBeCloseTo(12.6, 5);
    // step of 10 tokens: 63 / 10 = 6.3
    expect(
      scalar(() => tokenMean(tf.tensor2d(values), tf.tensor2d(mask), { tokens: 10, sequences: 4 })),
    ).toBeCloseTo(6.3, 5);
  });

  it('sequence-mean: mean over sequences of per-sequence token means', () => {
    // (1 + 2) / 2 = 1.5; (10 + 20 + 30) / 3 = 20; the empty sequence is not counted → (1.5 + 20) / 2 = 10.75
    expect(scalar(() => sequenceMean(tf.tensor2d(values), tf.tensor2d(mask)))).toBeCloseTo(10.75, 5);
    // step of 4 sequences: 21.5 / 4 = 5.375
    expect(
      scalar(() => sequenceMean(tf.tensor2d(values), tf.tensor2d(mask), { tokens: 10, sequences: 4 })),
    ).toBeCloseTo(5.375, 5);
  });

  it('gives 0, not NaN, for a micro-batch without trained tokens', () => {
    for (const aggregate of Object.values(aggregations)) {
      expect(scalar(() => aggregate(tf.tensor2d([[1, 2]]), tf.tensor2d([[0, 0]])))).toBe(0);
    }
  });

  it('rejects an empty step normaliser', () => {
    tf.tidy(() => {
      expect(() => tokenMean(tf.tensor2d(values), tf.tensor2d(mask), { tokens: 0, sequences: 1 })).toThrow(
        /tokens > 0 and sequences > 0/,
      );
    });
  });
});

describe('stepNormaliser', () => {
  it('totals trained tokens and non-empty sequences', () => {
    // 2 + 3 + 0 + 4 = 9 tokens; 3 sequences have at least one
    expect(stepNormaliser([2, 3, 0, 4])).toEqual({ tokens: 9, sequences: 3 });
  });

  it('names bad counts', () => {
    expect(() => stepNormaliser([2, -1])).toThrow(/sequence 1 must be an integer >= 0/);
    expect(() => stepNormaliser([0, 0])).toThrow(/no trained tokens/);
  });
});
