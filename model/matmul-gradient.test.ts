import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng } from './rng.ts';
import { useBackend } from '../test/support/model-fixtures.ts';
import { maxAbsDiff } from '../test/support/max-difference.ts';

/** Row-major [rows, cols] random matrix. */
function random(rows: number, cols: number, seed: number): number[][] {
  const rng = createRng(seed);
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => rng.normal()));
}
const transpose = (m: number[][]) => (m[0] as number[]).map((_, j) => m.map((row) => row[j] as number));
const product = (a: number[][], b: number[][]) =>
  a.map((row) =>
    (b[0] as number[]).map((_, j) => row.reduce((s, v, k) => s + v * ((b[k] as number[])[j] as number), 0)),
  );

describe('BatchMatMul gradient without transposed matmuls (wasm)', () => {
  beforeAll(async () => {
    await useBackend('wasm'); // registers the override
  });

  it('gives dL/dA and dL/dB of L = Σ W ⊙ op(A)·op(B) for all four transpose flags', async () => {
    // op(A) is [3, 4], op(B) is [4, 5], W is [3, 5]; dL/d op(A) = W·op(B)ᵀ, dL/d op(B) = op(A)ᵀ·W,
    // and a transposed operand's gradient is the transpose of its op's gradient.
    const opA = random(3, 4, 1);
    const opB = random(4, 5, 2);
    const w = random(3, 5, 3);
    const dOpA = product(w, transpose(opB));
    const dOpB = product(transpose(opA), w);
    for (const [ta, tb] of [
      [false, false],
      [false, true],
      [true, false],
      [true, true],
    ] as const) {
      const a = tf.tensor2d(ta ? transpose(opA) : opA);
      const b = tf.tensor2d(tb ? transpose(opB) : opB);
      const [da, db] = tf.grads((x: tf.Tensor, y: tf.Tensor) =>
        tf.sum(tf.mul(tf.matMul(x, y, ta, tb), tf.tensor2d(w))),
      )([a, b]);
      expect(maxAbsDiff(await (da as tf.Tensor).data(), (ta ? transpose(dOpA) : dOpA).flat())).toBeLessThan(
        1e-5,
      );
      expect(maxAbsDiff(await (db as tf.Tensor).data(), (tb ? transpose(dOpB) : dOpB).flat())).toBeLessThan(
        1e-5,
      );
      tf.dispose([a, b, da as tf.Tensor, db as tf.Tensor]);
    }
  });

  it('is the gradient in effect: the backward pass transposes explicitly', async () => {
    // tfjs-core's own gradient for C = A·B calls matMul with transpose flags and no Transpose kernel.
    const a = tf.tensor2d(random(3, 4, 6));
    const b = tf.tensor2d(random(4, 5, 7));
    const profile = await tf.profile(() => {
      const [da, db] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.matMul(x, y)))([a, b]);
      tf.dispose([da as tf.Tensor, db as tf.Tensor]);
    });
    expect(profile.kernelNames).toContain('Transpose');
    tf.dispose([a, b]);
  });

  it('handles the rank-4 batched products of attention', async () => {
    const a = tf.tensor4d(random(2 * 3 * 4, 5, 4).flat(), [2, 3, 4, 5]);
    const b = tf.tensor4d(random(2 * 3 * 5, 6, 5).flat(), [2, 3, 5, 6]);
    const [da, db] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.square(tf.matMul(x, y))))([a, b]);
    // Per batch slice: C = A·B, dC = 2C, dA = dC·Bᵀ, dB = Aᵀ·dC.
    const aData = (await a.array()) as number[][][][];
    const bData = (await b.array()) as number[][][][];
    const daWant: number[] = [];
    const dbWant: number[] = [];
    for (let i = 0; i < 2; i++) {
      for (let j = 0; j < 3; j++) {
        const am = (aData[i] as number[][][])[j] as number[][];
        const bm = (bData[i] as number[][][])[j] as number[][];
        const dc = product(am, bm).map((row) => row.map((v) => 2 * v));
        daWant.push(...product(dc, transpose(bm)).flat());
        dbWant.push(...product(transpose(am), dc).flat());
      }
    }
    expect(maxAbsDiff(await (da as tf.Tensor).data(), daWant)).toBeLessThan(1e-4);
    expect(maxAbsDiff(await (db as tf.Tensor).data(), dbWant)).toBeLessThan(1e-4);
  });

  it('gives dL/dB when A is much larger than dC (the product taken transposed)', async () => {
    // LoRA's dA = xᵀ·du shape: A [64, 40] against dC [64, 2]; dL/dB = Aᵀ·W for L = Σ W ⊙ A·B.
    const a = random(64, 40, 8);
    const b = random(40, 2, 9);
    const w = random(64, 2, 10);
    const [, db] = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(tf.matMul(x, y), tf.tensor2d(w))))([
      tf.tensor2d(a),
      tf.tensor2d(b),
    ]);
    expect(maxAbsDiff(await (db as tf.Tensor).data(), product(transpose(a), w).flat())).toBeLessThan(1e-4);
  });
});
