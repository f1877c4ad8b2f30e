import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng } from './rng.ts';
import { registerWasmBatchMatMul } from './wasm-batch-matmul.ts';
import { useBackend } from '../test/support/model-fixtures.ts';
import { largestDifference } from '../test/support/max-difference.ts';

function random(shape: number[], seed: number): tf.Tensor {
  const rng = createRng(seed);
  const size = shape.reduce((x, y) => x * y, 1);
  return tf.tensor(
    Float32Array.from({ length: size }, () => rng.normal()),
    shape,
  );
}

/** Float64 reference: out[e] = op(a[e or 0]) · op(b[e or 0]) over the flattened leading dimensions. */
function reference(
  a: Float32Array,
  aShape: number[],
  b: Float32Array,
  bShape: number[],
  transposeA = false,
  transposeB = false,
): number[] {
  const [ar, ac] = aShape.slice(-2) as [number, number];
  const [br, bc] = bShape.slice(-2) as [number, number];
  const m = transposeA ? ac : ar;
  const k = transposeA ? ar : ac;
  const n = transposeB ? br : bc;
  const batchA = aShape.slice(0, -2).reduce((x, y) => x * y, 1);
  const batchB = bShape.slice(0, -2).reduce((x, y) => x * y, 1);
  const out: number[] = [];
  for (let e = 0; e < Math.max(batchA, batchB); e++) {
    const aBase = (batchA === 1 ? 0 : e) * ar * ac;
    const bBase = (batchB === 1 ? 0 : e) * br * bc;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let l = 0; l < k; l++) {
          const x = a[aBase + (transposeA ? l * ac + i : i * ac + l)] as number;
          const y = b[bBase + (transposeB ? j * bc + l : l * bc + j)] as number;
          sum += x * y;
        }
        out.push(sum);
      }
    }
  }
  return out;
}

describe('wasm BatchMatMul through XNNPACK per batch entry', () => {
  beforeAll(async () => {
    await useBackend('wasm'); // installs the kernel
  });

  it('is installed on wasm', () => {
    expect(registerWasmBatchMatMul()).toBe(true);
  });

  it('matches a float64 product for batched, broadcast, rank-4 and transposed (stock) cases', async () => {
    const cases: [number[], number[], boolean, boolean][] = [
      [[3, 5, 7], [3, 7, 4], false, false],
      [[2, 3, 6, 5], [2, 3, 5, 4], false, false], // attention's rank 4
      [[3, 5, 7], [7, 4], false, false], // B without batch
      [[5, 7], [3, 7, 4], false, false], // A without batch
      [[1, 5, 7], [4, 7, 2], false, false], // batch-1 A broadcast
      [[3, 7, 5], [3, 7, 4], true, false], // transposed: the stock kernel
      [[3, 5, 7], [3, 4, 7], false, true],
      [[6, 33], [33, 17], false, false], // plain 2-D
    ];
    for (const [index, [aShape, bShape, ta, tb]] of cases.entries()) {
      const a = random(aShape, 10 + index);
      const b = random(bShape, 20 + index);
      const c = tf.matMul(a, b, ta, tb);
      const want = reference(
        (await a.data()) as Float32Array,
        aShape,
        (await b.data()) as Float32Array,
        bShape,
        ta,
        tb,
      );
      const { difference } = largestDifference(await c.data(), want);
      expect(difference, `case ${index}: [${aShape}]·[${bShape}]`).toBeLessThan(1e-4);
      tf.dispose([a, b, c]);
    }
  });

  it('leaves no tensors and no stale operators behind when B changes between calls', async () => {
    const a = random([4, 8, 6], 1);
    const before = tf.memory().numTensors;
    for (let round = 0; round < 3; round++) {
      const b = random([4, 6, 5], 100 + round); // a new B each round: a stale cached operator would show
      const c = tf.matMul(a, b);
      const want = reference(
        (await a.data()) as Float32Array,
        [4, 8, 6],
        (await b.data()) as Float32Array,
        [4, 6, 5],
      );
      expect(largestDifference(await c.data(), want).difference).toBeLessThan(1e-4);
      tf.dispose([b, c]);
    }
    expect(tf.memory().numTensors).toBe(before);
    a.dispose();
  });
});
