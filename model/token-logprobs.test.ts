import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng } from './rng.ts';
import { headLogprobs } from './token-logprobs.ts';
import { useBackend } from '../test/support/model-fixtures.ts';
import { largestDifference } from '../test/support/max-difference.ts';

interface Case {
  readonly hidden: Float64Array; // [N, D]
  readonly head: Float64Array; // [V, D]
  readonly targets: Int32Array; // [N]
  readonly dy: Float64Array; // [N]
  readonly n: number;
  readonly d: number;
  readonly v: number;
}

function makeCase(n: number, d: number, v: number, seed: number, spread = 1): Case {
  const rng = createRng(seed);
  return {
    hidden: Float64Array.from({ length: n * d }, () => spread * rng.normal()),
    head: Float64Array.from({ length: v * d }, () => rng.normal()),
    targets: Int32Array.from({ length: n }, () => Math.floor(rng.next() * v)),
    dy: Float64Array.from({ length: n }, () => rng.normal()),
    n,
    d,
    v,
  };
}

/** Float64: log p_y per row, and d(Σ dy·log p_y)/dh = dy·(W[y] − Σ_v p_v W[v]). */
function reference(c: Case): { logprobs: number[]; grad: number[] } {
  const logprobs: number[] = [];
  const grad: number[] = [];
  for (let i = 0; i < c.n; i++) {
    const logits = Array.from({ length: c.v }, (_, w) => {
      let s = 0;
      for (let k = 0; k < c.d; k++) s += (c.hidden[i * c.d + k] as number) * (c.head[w * c.d + k] as number);
      return s;
    });
    const max = Math.max(...logits);
    const sum = logits.reduce((s, l) => s + Math.exp(l - max), 0);
    const lse = max + Math.log(sum);
    const y = c.targets[i] as number;
    logprobs.push((logits[y] as number) - lse);
    for (let k = 0; k < c.d; k++) {
      let expected = 0;
      for (let w = 0; w < c.v; w++)
        expected += Math.exp((logits[w] as number) - lse) * (c.head[w * c.d + k] as number);
      grad.push((c.dy[i] as number) * ((c.head[y * c.d + k] as number) - expected));
    }
  }
  return { logprobs, grad };
}

async function run(
  c: Case,
  rowsPerChunk: number,
  rows?: Int32Array,
): Promise<{ logprobs: Float32Array; grad: Float32Array }> {
  const head = tf.tensor2d(Float32Array.from(c.head), [c.v, c.d]);
  const headT = tf.transpose(head) as tf.Tensor2D;
  const targets = tf.tensor1d(c.targets, 'int32');
  const hidden = tf.tensor2d(Float32Array.from(c.hidden), [c.n, c.d]);
  const dy = tf.tensor1d(Float32Array.from(c.dy));
  const values = headLogprobs(hidden, head, headT, targets, { rowsPerChunk, rows });
  const grad = tf.grad((h: tf.Tensor) =>
    tf.sum(tf.mul(headLogprobs(h as tf.Tensor2D, head, headT, targets, { rowsPerChunk, rows }), dy)),
  )(hidden);
  const out = { logprobs: (await values.data()) as Float32Array, grad: (await grad.data()) as Float32Array };
  tf.dispose([head, headT, targets, hidden, dy, values, grad]);
  return out;
}

describe('headLogprobs against a float64 log-softmax', () => {
  for (const backend of ['wasm', 'cpu'] as const) {
    describe(backend, () => {
      beforeAll(async () => {
        await useBackend(backend);
      });

      it('gives log p and its gradient in one chunk (probabilities kept) and in several', async () => {
        const c = makeCase(7, 5, 11, 1);
        const want = reference(c);
        for (const rowsPerChunk of [7, 3, 1]) {
          const got = await run(c, rowsPerChunk);
          const values = largestDifference(got.logprobs, want.logprobs);
          const grads = largestDifference(got.grad, want.grad);
          expect(values.difference, `logprobs, ${rowsPerChunk} rows per chunk`).toBeLessThan(2e-6);
          expect(grads.difference, `gradient, ${rowsPerChunk} rows per chunk`).toBeLessThan(2e-6);
        }
      });

      it('stays finite and exact where the target is far in the tail (log p ≪ −100)', async () => {
        // Spread logits: many targets have softmax probability below float32's smallest value, where
        // log(softmax) would be −∞; the log-sum-exp route keeps them.
        const c = makeCase(6, 4, 9, 2, 40);
        const want = reference(c);
        expect(Math.min(...want.logprobs)).toBeLessThan(-100);
        for (const rowsPerChunk of [6, 2]) {
          const got = await run(c, rowsPerChunk);
          // Relative to the magnitude of the logits (hundreds): float32 rounding of the logits themselves.
          expect(largestDifference(got.logprobs, want.logprobs).difference).toBeLessThan(1e-3);
          expect(largestDifference(got.grad, want.grad).difference).toBeLessThan(1e-3);
        }
      });

      it('computes only the chosen rows: the others are 0 with no gradient', async () => {
        const c = makeCase(9, 4, 13, 3);
        const want = reference(c);
        const rows = Int32Array.from([1, 2, 5, 8]);
        for (const rowsPerChunk of [9, 3]) {
          const got = await run(c, rowsPerChunk, rows);
          const chosen = (i: number) => rows.includes(i);
          const wantValues = want.logprobs.map((v, i) => (chosen(i) ? v : 0));
          const wantGrad = want.grad.map((g, j) => (chosen(Math.floor(j / c.d)) ? g : 0));
          expect(largestDifference(got.logprobs, wantValues).difference).toBeLessThan(2e-6);
          expect(largestDifference(got.grad, wantGrad).difference).toBeLessThan(2e-6);
        }
        const none = await run(c, 9, new Int32Array(0));
        expect(Array.from(none.logprobs).every((v) => v === 0)).toBe(true);
        expect(Array.from(none.grad).every((v) => v === 0)).toBe(true);
      });
    });
  }
});
