import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { rmsNorm } from './decoder.ts';
import { createRng } from './rng.ts';
import { useBackend } from '../test/support/model-fixtures.ts';
import { largestDifference } from '../test/support/max-difference.ts';

/** Float64 host RMSNorm of one row. */
function hostNorm(row: readonly number[], weight: readonly number[], eps: number): number[] {
  const meanSquare = row.reduce((s, v) => s + v * v, 0) / row.length;
  const r = 1 / Math.sqrt(meanSquare + eps);
  return row.map((v, i) => v * r * (weight[i] as number));
}

describe('rmsNorm and its written-out gradient', () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    describe(backend, () => {
      beforeAll(async () => {
        await useBackend(backend);
      });

      it('matches float64 values and central differences of Σ c·y', async () => {
        const rng = createRng(5);
        const [n, d, eps] = [3, 6, 1e-5];
        const x = Array.from({ length: n }, () => Array.from({ length: d }, () => rng.normal()));
        const w = Array.from({ length: d }, () => 0.5 + rng.next());
        const c = Array.from({ length: n }, () => Array.from({ length: d }, () => rng.normal()));
        const loss = (rows: number[][]) =>
          rows.reduce(
            (s, row, i) => s + hostNorm(row, w, eps).reduce((t, y, j) => t + y * (c[i]?.[j] as number), 0),
            0,
          );
        const h = 1e-6;
        const wantGrad = x.flatMap((row, i) =>
          row.map((_, j) => {
            const plus = x.map((r) => [...r]);
            const minus = x.map((r) => [...r]);
            (plus[i] as number[])[j] = (row[j] as number) + h;
            (minus[i] as number[])[j] = (row[j] as number) - h;
            return (loss(plus) - loss(minus)) / (2 * h);
          }),
        );
        const xt = tf.tensor2d(x);
        const wt = tf.tensor1d(w);
        const ct = tf.tensor2d(c);
        const y = rmsNorm(xt, wt, eps);
        const grad = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(rmsNorm(v as tf.Tensor2D, wt, eps), ct)))(xt);
        const values = largestDifference(
          await y.data(),
          x.flatMap((row) => hostNorm(row, w, eps)),
        );
        const grads = largestDifference(await grad.data(), wantGrad);
        expect(values.difference).toBeLessThan(1e-5);
        expect(grads.difference).toBeLessThan(1e-4);
        tf.dispose([xt, wt, ct, y, grad]);
      });
    });
  }
});
