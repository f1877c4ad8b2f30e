import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AdamW } from './adamw.ts';
import { type Aggregation, stepNormaliser } from './aggregate.ts';
import { clipGradNorm } from './clip-grad-norm.ts';
import { expectClose } from '../../test/support/max-difference.ts';
import { type GrpoLossOptions, grpoLoss, readLossSums } from './grpo-loss.ts';
import type { LossKind } from './losses.ts';
import { addGrads, microBatchGrads } from './micro-batch-grads.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

// The hand example of losses.test.ts: ρ = [[1.1, 1.5, 0.5, 0.9], [0.7, 1.0, 1.3, ·]], A = [1, −2].
const logprobs = [
  [-1, -0.5, -2, -0.25],
  [-0.3, -1.2, -0.8, -0.6],
];
const ratios = [
  [1.1, 1.5, 0.5, 0.9],
  [0.7, 1.0, 1.3, 1],
];
const oldLogprobs = logprobs.map((row, b) => row.map((l, t) => l - Math.log(ratios[b]?.[t] as number)));
const mask = [
  [1, 1, 1, 1],
  [1, 1, 1, 0],
];
const cispoBand: GrpoLossOptions = {
  lossKind: 'cispo',
  clip: { low: 0.2, high: 0.28 },
  aggregation: 'token-mean',
  beta: 0,
};

function handInput(ref?: number[][]) {
  return {
    logprobs: tf.tensor2d(logprobs),
    oldLogprobs: tf.tensor2d(oldLogprobs),
    advantages: tf.tensor1d([1, -2]),
    mask: tf.tensor2d(mask),
    ...(ref ? { refLogprobs: tf.tensor2d(ref) } : {}),
  };
}

describe('grpoLoss', () => {
  it('aggregates the token loss and reports the masked sums', async () => {
    // CISPO token losses (losses.test.ts): [1.1, 0.64, 1.6, 0.225, −0.48, −2.4, −2.048]
    // Σ = 3.565 − 4.928 = −1.363 over 7 tokens → −0.19471429
    const sums = await readLossSums(tf.tidy(() => grpoLoss(cispoBand, handInput())));
    expect(sums.loss).toBeCloseTo(-0.19471429, 5);
    expect(sums.policyLoss).toBeCloseTo(-0.19471429, 5);
    expect(sums.tokens).toBe(7);
    expect(sums.sequences).toBe(2);
    // Σρ on the mask = 1.1 + 1.5 + 0.5 + 0.9 + 0.7 + 1.0 + 1.3 = 7.0
    expect(sums.ratioSum).toBeCloseTo(7, 5);
    expect(sums.clippedLow).toBe(2);
    expect(sums.clippedHigh).toBe(2);
    expect(sums.kl).toBeUndefined();
  });

  it('adds beta times the aggregated k3 when reference log-probs are given', async () => {
    // ℓ_ref = ℓ + 0.1 everywhere → k3 = e^0.1 − 0.1 − 1 = 0.00517092 per token; token-mean = 0.00517092
    // loss = −0.19471429 + 0.5·0.00517092 = −0.19212883; klSum = 7·0.00517092 = 0.03619643
    const ref = logprobs.map((row) => row.map((l) => l + 0.1));
    const sums = await readLossSums(tf.tidy(() => grpoLoss({ ...cispoBand, beta: 0.5 }, handInput(ref))));
    expect(sums.kl).toBeCloseTo(0.00517092, 6);
    expect(sums.klSum).toBeCloseTo(0.03619643, 5);
    expect(sums.loss).toBeCloseTo(-0.19212883, 5);
    expect(sums.policyLoss).toBeCloseTo(-0.19471429, 5);
  });

  it('refuses beta > 0 without reference log-probs', () => {
    tf.tidy(() => {
      expect(() => grpoLoss({ ...cispoBand, beta: 0.1 }, handInput())).toThrow(/no refLogprobs/);
    });
  });
});

// Deterministic pseudo-random numbers (a 32-bit LCG) for a batch bigger than a hand example.
function numbers(count: number, seed: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  });
}

describe('micro-batching', () => {
  const B = 4;
  const T = 5;
  const lengths = [5, 3, 1, 4];
  const maskRows = lengths.map((n) => Array.from({ length: T }, (_, t) => (t < n ? 1 : 0)));
  const oldValues = numbers(B * T, 7).map((x) => -1 + x);
  const advantages = [1, -0.5, 0.3, -1];

  /** Loss of rows [from, to) with θ → ℓ = −softplus(θ), reference ℓ at θ + 0.2 (constant). */
  function lossOf(
    theta: tf.Variable,
    from: number,
    to: number,
    options: GrpoLossOptions,
    step?: { tokens: number; sequences: number },
  ) {
    const rows = to - from;
    const slice = tf.slice(theta, [from, 0], [rows, T]); // [rows, T]
    const l = tf.neg(tf.softplus(slice)) as tf.Tensor2D; // [rows, T]
    const ref = tf.neg(tf.softplus(tf.add(slice, 0.2))) as tf.Tensor2D;
    return grpoLoss(
      options,
      {
        logprobs: l,
        oldLogprobs: tf.tensor2d(oldValues.slice(from * T, to * T), [rows, T]),
        advantages: tf.tensor1d(advantages.slice(from, to)),
        mask: tf.tensor2d(maskRows.slice(from, to)),
        refLogprobs: tf.tensor2d(Array.from(tf.tidy(() => ref.dataSync())), [rows, T]),
      },
      step,
    );
  }

  const kinds: LossKind[] = ['ppo-clip', 'cispo'];
  const aggregationKinds: Aggregation[] = ['token-mean', 'sequence-mean'];
  for (const lossKind of kinds) {
    for (const aggregation of aggregationKinds) {
      it(`two micro-batches add up to the full batch: ${lossKind}, ${aggregation}`, async () => {
        const theta = tf.variable(
          tf.tensor2d(
            numbers(B * T, 3).map((x) => 2 * x),
            [B, T],
          ),
        );
        const options: GrpoLossOptions = { lossKind, clip: { low: 0.2, high: 0.28 }, aggregation, beta: 0.1 };
        // Full batch, normaliser taken from its own mask.
        const full = microBatchGrads([theta], () => lossOf(theta, 0, B, options));
        // Two micro-batches divided by the step's totals: 13 tokens, 4 sequences.
        const step = stepNormaliser(lengths);
        expect(step).toEqual({ tokens: 13, sequences: 4 });
        const first = microBatchGrads([theta], () => lossOf(theta, 0, 2, options, step));
        const second = microBatchGrads([theta], () => lossOf(theta, 2, 4, options, step));
        const summed = addGrads(addGrads(undefined, first.grads), second.grads);
        const [fullSums, firstSums, secondSums] = await Promise.all(
          [full, first, second].map((part) => readLossSums(part.sums)),
        );
        expect(firstSums!.loss + secondSums!.loss).toBeCloseTo(fullSums!.loss, 6);
        expect(firstSums!.tokens + secondSums!.tokens).toBe(13);
        const fullGrad = Array.from(await (full.grads[0] as tf.Tensor).data());
        expectClose(await (summed[0] as tf.Tensor).data(), fullGrad, 1e-6);
        expect(fullGrad.some((g) => Math.abs(g) > 1e-3)).toBe(true); // the comparison is not of zeros
        tf.dispose([theta, ...full.grads, ...summed]);
      });
    }
  }

  it('gives zeros to a variable the loss does not reach, and rejects frozen ones', () => {
    const used = tf.variable(tf.zeros([2, 4]));
    const unused = tf.variable(tf.ones([3]));
    const frozen = tf.variable(tf.ones([1]), false);
    const result = microBatchGrads([used, unused], () =>
      grpoLoss(cispoBand, { ...handInput(), logprobs: tf.add(used, tf.tensor2d(logprobs)) as tf.Tensor2D }),
    );
    expectClose(result.grads[1]!.dataSync(), [0, 0, 0], 0);
    expect(() => microBatchGrads([used, frozen], () => grpoLoss(cispoBand, handInput()))).toThrow(
      /not trainable/,
    );
    tf.dispose([used, unused, frozen, ...result.grads, ...Object.values(result.sums)]);
  });

  it('a whole step (micro-batches, clipping, AdamW, read-back) leaks no tensors', async () => {
    const theta = tf.variable(tf.tensor2d(numbers(B * T, 11), [B, T]));
    const optimiser = new AdamW([theta], {
      learningRate: 0.01,
      beta1: 0.9,
      beta2: 0.99,
      eps: 1e-8,
      weightDecay: 0.1,
    });
    const options: GrpoLossOptions = {
      lossKind: 'cispo',
      clip: { low: 1, high: 4 },
      aggregation: 'token-mean',
      beta: 0.1,
    };
    const step = stepNormaliser(lengths);
    const counts: number[] = [];
    for (let iteration = 0; iteration < 3; iteration++) {
      let total: tf.Tensor[] | undefined;
      for (const [from, to] of [
        [0, 2],
        [2, 4],
      ] as const) {
        const part = microBatchGrads([theta], () => lossOf(theta, from, to, options, step));
        await readLossSums(part.sums);
        total = addGrads(total, part.grads);
      }
      const clipped = clipGradNorm(total ?? [], 0.5);
      optimiser.applyGradients(clipped.grads);
      await clipped.norm.data();
      tf.dispose([...(total ?? []), ...clipped.grads, clipped.norm]);
      counts.push(tf.memory().numTensors);
    }
    expect(counts[2]).toBe(counts[0]);
    expect(counts[1]).toBe(counts[0]);
    optimiser.dispose();
    theta.dispose();
  });
});
