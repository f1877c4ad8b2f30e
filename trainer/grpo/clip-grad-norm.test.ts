import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { clipGradNorm } from './clip-grad-norm.ts';
import { expectClose } from '../../test/support/max-difference.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

function clip(maxNorm: number) {
  return tf.tidy(() => {
    const out = clipGradNorm([tf.tensor1d([3, 4]), tf.tensor2d([[12]])], maxNorm);
    return { grads: out.grads.map((g) => Array.from(g.dataSync())), norm: out.norm.dataSync()[0] };
  });
}

describe('clipGradNorm', () => {
  it('scales all gradients together by max / ‖g‖ when the global norm is above max', () => {
    // ‖g‖ = √(3² + 4² + 12²) = √169 = 13; coef = 6.5 / (13 + 1e-6) ≈ 0.49999996 → [1.5, 2], [6]
    const out = clip(6.5);
    expect(out.norm).toBeCloseTo(13, 5);
    expectClose(out.grads[0] ?? [], [1.5, 2], 1e-5);
    expectClose(out.grads[1] ?? [], [6], 1e-5);
  });

  it('leaves gradients under the limit, or with Infinity, unchanged', () => {
    for (const maxNorm of [20, Number.POSITIVE_INFINITY]) {
      const out = clip(maxNorm);
      expect(out.norm).toBeCloseTo(13, 5);
      expectClose(out.grads[0] ?? [], [3, 4], 1e-6);
      expectClose(out.grads[1] ?? [], [12], 1e-6);
    }
  });

  it('names a bad limit and frees its intermediates', () => {
    const g = tf.tensor1d([1, 1]);
    expect(() => clipGradNorm([g], 0)).toThrow(/maxNorm must be > 0/);
    const before = tf.memory().numTensors;
    const out = clipGradNorm([g], 1);
    expect(tf.memory().numTensors).toBe(before + 2); // one clipped gradient + the norm
    tf.dispose([...out.grads, out.norm, g]);
  });
});
