import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerWasmMemoryKernels } from './wasm-memory-kernels.ts';
import { useBackend } from '../test/support/model-fixtures.ts';

describe('wasm Identity, Cast, GatherV2, Slice, SplitV and Concat replacements', () => {
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

  it('slices and splits any rank like a host index walk, whole trailing axes or not', async () => {
    /** Host reference: the elements of x [shape] at begin + index for every index < size. */
    const hostSlice = (data: number[], shape: number[], begin: number[], size: number[]) => {
      const out: number[] = [];
      const walk = (axis: number, offset: number) => {
        if (axis === shape.length) {
          out.push(data[offset] as number);
          return;
        }
        const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
        for (let i = 0; i < (size[axis] as number); i++)
          walk(axis + 1, offset + ((begin[axis] as number) + i) * stride);
      };
      walk(0, 0);
      return out;
    };
    const cases: [number[], number[], number[]][] = [
      [[10], [3], [5]],
      [
        [4, 6],
        [1, 0],
        [2, 6],
      ], // whole rows: one run
      [
        [4, 70],
        [0, 5],
        [4, 40],
      ], // long runs
      [
        [3, 4, 5],
        [1, 1, 2],
        [2, 3, 2],
      ],
      [
        [2, 3, 4, 5, 2],
        [1, 0, 1, 2, 0],
        [1, 3, 2, 3, 2],
      ],
    ];
    for (const [shape, begin, size] of cases) {
      const data = Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => i * 3 - 7);
      for (const dtype of ['float32', 'int32'] as const) {
        const x = tf.tensor(data, shape, dtype);
        const got = Array.from(await tf.slice(x, begin, size).data());
        expect(got, `[${shape}] from [${begin}] size [${size}] ${dtype}`).toEqual(
          hostSlice(data, shape, begin, size),
        );
      }
    }
    const x = tf.tensor3d(
      Array.from({ length: 2 * 3 * 7 }, (_, i) => i),
      [2, 3, 7],
    );
    const parts = tf.split(x, [2, 4, 1], 2);
    const data = Array.from(await x.data());
    expect(await Promise.all(parts.map(async (p) => Array.from(await p.data())))).toEqual([
      hostSlice(data, [2, 3, 7], [0, 0, 0], [2, 3, 2]),
      hostSlice(data, [2, 3, 7], [0, 0, 2], [2, 3, 4]),
      hostSlice(data, [2, 3, 7], [0, 0, 6], [2, 3, 1]),
    ]);
    expect(Array.from(await tf.split(tf.tensor1d([true, false, true], 'bool'), 3)[1]!.data())).toEqual([0]);
  });

  it('concatenates along any axis as nested host arrays do, empty parts and all dtypes included', async () => {
    const a = Array.from({ length: 2 * 3 * 20 }, (_, i) => i);
    const b = Array.from({ length: 2 * 1 * 20 }, (_, i) => -i);
    const got = await tf
      .concat([tf.tensor3d(a, [2, 3, 20]), tf.tensor3d(b, [2, 1, 20]), tf.zeros([2, 0, 20])], 1)
      .array();
    const ta = (await tf.tensor3d(a, [2, 3, 20]).array()) as number[][][];
    const tb = (await tf.tensor3d(b, [2, 1, 20]).array()) as number[][][];
    expect(got).toEqual([0, 1].map((i) => [...(ta[i] as number[][]), ...(tb[i] as number[][])]));
    const short = await tf
      .concat([tf.tensor2d([1, 2, 3, 4], [2, 2], 'int32'), tf.tensor2d([5, 6], [2, 1], 'int32')], 1)
      .array();
    expect(short).toEqual([
      [1, 2, 5],
      [3, 4, 6],
    ]);
    const flags = await tf.concat([tf.tensor1d([true, false], 'bool'), tf.tensor1d([true], 'bool')]).data();
    expect(Array.from(flags)).toEqual([1, 0, 1]);
    const long = Array.from({ length: 100 }, (_, i) => i * 0.25);
    expect(Array.from(await tf.concat([tf.tensor1d(long), tf.tensor1d(long)]).data())).toEqual([
      ...long,
      ...long,
    ]);
  });
});
