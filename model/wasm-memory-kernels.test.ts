import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerWasmMemoryKernels } from './wasm-memory-kernels.ts';
import { useBackend } from '../test/support/model-fixtures.ts';

describe('wasm Identity, Cast and GatherV2 replacements', () => {
  beforeAll(async () => {
    await useBackend('wasm'); // installs them
  });

  it('is installed on wasm', () => {
    expect(registerWasmMemoryKernels()).toBe(true);
  });

  it('gathers rows along axis 0 for any row size and index shape, as a host lookup does', async () => {
    const table = Array.from({ length: 7 * 40 }, (_, i) => i * 0.5 - 3);
    const wide = tf.tensor2d(table, [7, 40]);
    const flat = tf.tensor1d(table);
    const indices = [6, 0, 3, 3, 1, 5];
    const got = await tf.gather(wide, tf.tensor2d(indices, [2, 3], 'int32')).array();
    const want = [0, 1].map((r) =>
      [0, 1, 2].map((c) => table.slice(indices[r * 3 + c]! * 40, indices[r * 3 + c]! * 40 + 40)),
    );
    expect(got).toEqual(want);
    const picked = await tf.gather(flat, tf.tensor1d([279, 0, 17], 'int32')).data();
    expect(Array.from(picked)).toEqual([table[279], table[0], table[17]]);
    const ints = await tf
      .gather(tf.tensor2d([1, 2, 3, 4], [2, 2], 'int32'), tf.tensor1d([1, 1, 0], 'int32'))
      .array();
    expect(ints).toEqual([
      [3, 4],
      [3, 4],
      [1, 2],
    ]);
  });

  it('keeps the stock kernel for other axes and refuses an index outside the table', async () => {
    const x = tf.tensor2d([1, 2, 3, 4, 5, 6], [2, 3]);
    expect(await tf.gather(x, tf.tensor1d([2, 0], 'int32'), 1).array()).toEqual([
      [3, 1],
      [6, 4],
    ]);
    expect(() => tf.gather(x, tf.tensor1d([2], 'int32'))).toThrow(/not in \[0, 1\]/);
  });

  it('shares the buffer on clone: the copy outlives its source, and gradients pass through', async () => {
    const x = tf.tensor1d([1, -2, 3]);
    const y = tf.clone(x);
    x.dispose();
    expect(Array.from(await y.data())).toEqual([1, -2, 3]);
    const g = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(tf.clone(v), tf.clone(v))))(y);
    expect(Array.from(await g.data())).toEqual([2, -4, 6]);
    const before = tf.memory().numBytes;
    tf.dispose([y, g]);
    expect(tf.memory().numBytes).toBeLessThan(before);
  });

  it('casts to the same dtype by sharing and to another dtype as before', async () => {
    const x = tf.tensor1d([1.5, -2.25, 3]);
    const same = tf.cast(x, 'float32');
    x.dispose();
    expect(Array.from(await same.data())).toEqual([1.5, -2.25, 3]);
    expect(Array.from(await tf.cast(same, 'int32').data())).toEqual([1, -2, 3]);
  });
});
