import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectClose } from '../../test/support/max-difference.ts';
import { klK3 } from './kl.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('klK3', () => {
  it('matches hand-computed values and gradients', () => {
    // ℓ = [−1, −2, ·], ℓ_ref = [−1.5, −1, ·]; d = ℓ_ref − ℓ = [−0.5, 1]
    // k3 = e^d − d − 1 = [0.60653066 + 0.5 − 1, 2.71828183 − 1 − 1] = [0.10653066, 0.71828183]
    // ∂k3/∂ℓ = 1 − e^d = [0.39346934, −1.71828183]; the masked third token (NaN reference) gives 0.
    const { values, grad } = tf.tidy(() => {
      const l = tf.tensor2d([[-1, -2, -0.5]]);
      const ref = tf.tensor2d([[-1.5, -1, Number.NaN]]);
      const mask = tf.tensor2d([[1, 1, 0]]);
      return {
        values: klK3(l, ref, mask).dataSync(),
        grad: tf
          .grad((x: tf.Tensor) => tf.sum(klK3(x as tf.Tensor2D, ref, mask)))(l)
          .dataSync(),
      };
    });
    expectClose(values, [0.10653066, 0.71828183, 0], 1e-6);
    expectClose(grad, [0.39346934, -1.71828183, 0], 1e-6);
  });

  it('averages to the exact KL(q ‖ p) when tokens are weighted by q', () => {
    // E_{x~q}[k3] = Σ q·(p/q − log(p/q) − 1) = Σp − Σq + Σ q·log(q/p) = KL(q ‖ p), computed here in plain JS.
    const q = [0.5, 0.3, 0.2];
    const p = [0.2, 0.2, 0.6];
    const exact = q.reduce((sum, qi, i) => sum + qi * Math.log(qi / (p[i] as number)), 0); // 0.28918...
    const k3 = tf.tidy(() =>
      klK3(
        tf.tensor2d([q.map(Math.log)]),
        tf.tensor2d([p.map(Math.log)]),
        tf.ones([1, 3]) as tf.Tensor2D,
      ).dataSync(),
    );
    const expectation = q.reduce((sum, qi, i) => sum + qi * (k3[i] as number), 0);
    expect(Math.abs(expectation - exact)).toBeLessThan(1e-6);
    expect(k3.every((value) => value >= 0)).toBe(true);
  });

  it('is zero when the policy equals the reference, and names a shape mismatch', () => {
    tf.tidy(() => {
      const l = tf.tensor2d([[-0.7, -3]]);
      expectClose(klK3(l, l, tf.ones([1, 2]) as tf.Tensor2D).dataSync(), [0, 0], 0);
      expect(() => klK3(l, tf.zeros([1, 3]) as tf.Tensor2D, tf.ones([1, 2]) as tf.Tensor2D)).toThrow(
        /refLogprobs must match logprobs \[1,2\]/,
      );
    });
  });
});
