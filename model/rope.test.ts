import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig } from './hf-config.ts';
import { applyRope, ropeInverseFrequencies, ropeTables, scaledRopeTables } from './rope.ts';
import { useBackend } from '../test/support/model-fixtures.ts';

const base = { headDim: 8, ropeTheta: 10000, ropeScaling: null } as unknown as ModelConfig;

describe('rotary embeddings', () => {
  beforeAll(() => useBackend('cpu'));

  it('uses θ^(−2i/d) and the llama3 band rule', () => {
    // d = 8: 10000^0, 10000^−0.25, 10000^−0.5, 10000^−0.75 = 1, 0.1, 0.01, 0.001.
    expect(Array.from(ropeInverseFrequencies(base), (f) => Number(f.toPrecision(6)))).toEqual([
      1, 0.1, 0.01, 0.001,
    ]);
    const llama3 = ropeInverseFrequencies({
      ...base,
      ropeScaling: {
        type: 'llama3',
        factor: 8,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositionEmbeddings: 64,
      },
    });
    // Wavelengths 2π/f = 6.28, 62.8, 628, 6283 against the band [64/4, 64/1] = [16, 64]:
    // 6.28 < 16 keeps 1; 628 and 6283 > 64 are divided by 8; 62.8 is inside, so with
    // s = (64/62.83 − 1)/(4 − 1) = 0.006197 it becomes (1 − s)·0.1/8 + s·0.1 = 0.013042.
    expect(llama3[0]).toBeCloseTo(1, 6);
    expect(llama3[1]).toBeCloseTo(0.0130423, 6);
    expect(llama3[2]).toBeCloseTo(0.00125, 8);
    expect(llama3[3]).toBeCloseTo(0.000125, 9);
  });

  it('rotates each (x_i, x_{i+d/2}) pair by position · f_i', async () => {
    // One head, d = 4 (f = 1, 0.01), position 2: pair 0 rotates by 2 rad, pair 1 by 0.02 rad.
    const x = tf.tensor4d([1, 0, 0, 1], [1, 1, 1, 4]); // x = (x0, x1 | x2, x3): pairs (x0, x2), (x1, x3)
    const tables = ropeTables(tf.tensor2d([[2]], [1, 1], 'int32'), new Float32Array([1, 0.01]));
    const out = Array.from(await applyRope(x, tables).data());
    // pair (1, 0) by 2 rad → (cos 2, sin 2); pair (0, 1) by 0.02 rad → (−sin 0.02, cos 0.02).
    const want = [Math.cos(2), -Math.sin(0.02), Math.sin(2), Math.cos(0.02)];
    for (const [i, v] of out.entries()) expect(v).toBeCloseTo(want[i] as number, 6);
  });

  it('rotates every head of every position by its own angle, scaled when asked', async () => {
    // [B 2, T 3, heads 2, hd 4] against the pairwise rotation written out on the host.
    const frequencies = new Float32Array([0.7, 0.05]);
    const positions = [
      [0, 1, 2],
      [5, 0, 9],
    ];
    const data = Array.from({ length: 2 * 3 * 2 * 4 }, (_, i) => Math.sin(i * 1.3) + 0.1 * i);
    const x = tf.tensor4d(data, [2, 3, 2, 4]);
    const tables = scaledRopeTables(ropeTables(tf.tensor2d(positions, [2, 3], 'int32'), frequencies), 0.5);
    const out = await applyRope(x, tables).data();
    for (let b = 0; b < 2; b++)
      for (let t = 0; t < 3; t++)
        for (let head = 0; head < 2; head++) {
          const at = ((b * 3 + t) * 2 + head) * 4;
          for (let i = 0; i < 2; i++) {
            const angle = (positions[b]?.[t] as number) * (frequencies[i] as number);
            const [x1, x2] = [data[at + i] as number, data[at + i + 2] as number];
            expect(out[at + i]).toBeCloseTo(0.5 * (x1 * Math.cos(angle) - x2 * Math.sin(angle)), 5);
            expect(out[at + i + 2]).toBeCloseTo(0.5 * (x2 * Math.cos(angle) + x1 * Math.sin(angle)), 5);
          }
        }
  });
});
