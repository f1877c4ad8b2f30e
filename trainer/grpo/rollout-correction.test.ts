// Truncated importance weights against a host reference, their bound over random log-probs, and the
// corrected GRPO loss against the uncorrected one where the two must agree.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectClose } from '../../test/support/max-difference.ts';
import { type GrpoLossOptions, grpoLoss, readLossSums } from './grpo-loss.ts';
import type { LossKind } from './losses.ts';
import { microBatchGrads } from './micro-batch-grads.ts';
import { truncatedImportanceWeights } from './rollout-correction.ts';
import { logRatioBound } from './rollout-correction-kinds.ts';
import { stopGradient } from './stop-gradient.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

// Deterministic pseudo-random numbers in [−0.5, 0.5) (a 32-bit LCG).
function numbers(count: number, seed: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  });
}

/** The weight by hand: min(e^(p − s), cap) on the mask, with the log-ratio clamped as documented. */
function referenceWeight(proximal: number, sampler: number, cap: number, on: boolean): number {
  if (!on) return 0;
  const delta = Math.min(logRatioBound, Math.max(-logRatioBound, proximal - sampler));
  return Math.min(Math.exp(delta), cap);
}

describe('truncatedImportanceWeights', () => {
  it('is min(π_prox / π_sampler, cap) on trained tokens and 0 elsewhere, NaN off the mask included', async () => {
    const proximal = [
      [-1, -0.5, -2, -0.25],
      [-0.3, -1.2, -0.8, -0.6],
    ];
    // Ratios e^(p − s): 3, 1, 0.5, e^30 (clamped), 1.5, 0.2, 2, off-mask.
    const sampler = [
      [-1 - Math.log(3), -0.5, -2 + Math.log(2), -30.25],
      [-0.3 - Math.log(1.5), -1.2 + Math.log(5), -0.8 - Math.log(2), Number.NaN],
    ];
    const mask = [
      [1, 1, 1, 1],
      [1, 1, 1, 0],
    ];
    const cap = 2;
    const out = tf.tidy(() =>
      truncatedImportanceWeights(
        {
          proximalLogprobs: tf.tensor2d(proximal),
          samplerLogprobs: tf.tensor2d(sampler),
          mask: tf.tensor2d(mask),
        },
        cap,
      ),
    );
    expectClose(await out.weight.data(), [2, 1, 0.5, 2, 1.5, 0.2, 2, 0], 1e-5);
    expectClose(await out.truncated.data(), [1, 0, 0, 1, 0, 0, 0, 0], 0);
    const ratio = await out.ratio.data();
    expect(ratio[3]).toBeCloseTo(Math.exp(logRatioBound), -3); // clamped, finite
    expect(ratio[7]).toBe(0);
    tf.dispose(Object.values(out));
  });

  it('never exceeds the cap, over random log-probs, caps and masks (a property, 200 draws)', async () => {
    let largestGap = 0;
    for (let draw = 0; draw < 200; draw++) {
      const [b, t] = [1 + (draw % 4), 1 + ((draw * 7) % 9)];
      const n = b * t;
      // Log-prob differences up to ±40 nats: far beyond any cap, both ways.
      const proximal = numbers(n, draw + 1).map((x) => 20 * x - 3);
      const sampler = numbers(n, draw + 1001).map((x) => 20 * x - 3);
      const maskBits = numbers(n, draw + 2001).map((x) => (x > -0.3 ? 1 : 0));
      const cap = 1 + 9 * (numbers(1, draw + 3001)[0] as number) + 4.5; // in [1, 10)
      const out = tf.tidy(() =>
        truncatedImportanceWeights(
          {
            proximalLogprobs: tf.tensor2d(proximal, [b, t]),
            samplerLogprobs: tf.tensor2d(sampler, [b, t]),
            mask: tf.tensor2d(maskBits, [b, t]),
          },
          cap,
        ),
      );
      const weight = await out.weight.data();
      // The tensors are float32: the bound is the cap as float32 holds it.
      for (const value of weight) expect(value).toBeLessThanOrEqual(Math.fround(cap));
      const expected = proximal.map((p, i) =>
        referenceWeight(p, sampler[i] as number, cap, maskBits[i] === 1),
      );
      expectClose(weight, expected, 1e-5 * cap);
      largestGap = Math.max(largestGap, ...expected.map((value) => cap - value));
      tf.dispose(Object.values(out));
    }
    expect(largestGap).toBeGreaterThan(0.5); // not every weight sat at the cap
  });

  it('refuses a cap below 1 or not below e^20', () => {
    const input = () => ({
      proximalLogprobs: tf.zeros([1, 1]) as tf.Tensor2D,
      samplerLogprobs: tf.zeros([1, 1]) as tf.Tensor2D,
      mask: tf.ones([1, 1]) as tf.Tensor2D,
    });
    tf.tidy(() => {
      expect(() => truncatedImportanceWeights(input(), 0.5)).toThrow(/cap/);
      expect(() => truncatedImportanceWeights(input(), Number.POSITIVE_INFINITY)).toThrow(/cap/);
    });
  });
});

describe('grpoLoss with a rollout correction', () => {
  const B = 3;
  const T = 6;
  const lengths = [6, 4, 2];
  const maskRows = lengths.map((n) => Array.from({ length: T }, (_, t) => (t < n ? 1 : 0)));
  const advantages = [0.8, -0.5, 0.3];

  /** The loss and its gradient with respect to θ, where ℓ = −softplus(θ) and π_prox = sg(ℓ). */
  async function lossAndGrad(
    thetaValues: number[],
    samplerOf: (current: number[]) => number[],
    options: GrpoLossOptions,
  ) {
    const theta = tf.variable(tf.tensor2d(thetaValues, [B, T]));
    const current = tf.tidy(() => Array.from(tf.neg(tf.softplus(theta)).dataSync()));
    const sampler = samplerOf(current);
    const result = microBatchGrads([theta], () => {
      const logprobs = tf.neg(tf.softplus(theta)) as tf.Tensor2D;
      return grpoLoss(options, {
        logprobs,
        oldLogprobs: tf.tensor2d(sampler, [B, T]),
        advantages: tf.tensor1d(advantages),
        mask: tf.tensor2d(maskRows),
        ...(options.correction ? { proximalLogprobs: stopGradient(logprobs) } : {}),
      });
    });
    const grad = Array.from(await (result.grads[0] as tf.Tensor).data());
    const sums = await readLossSums(result.sums);
    tf.dispose([theta, ...result.grads]);
    return { grad, sums };
  }

  const theta = numbers(B * T, 5).map((x) => 3 * x);

  for (const lossKind of ['ppo-clip', 'cispo'] as LossKind[]) {
    it(`changes nothing when the sampler is the policy being trained (staleness 0): ${lossKind}`, async () => {
      const base: GrpoLossOptions = {
        lossKind,
        clip: lossKind === 'cispo' ? { low: 1, high: 4 } : { low: 0.2, high: 0.28 },
        aggregation: 'token-mean',
        beta: 0,
      };
      const same = (current: number[]) => current;
      const plain = await lossAndGrad(theta, same, base);
      const corrected = await lossAndGrad(theta, same, { ...base, correction: { kind: 'tis', cap: 2 } });
      expectClose(corrected.grad, plain.grad, 1e-6);
      expect(corrected.sums.loss).toBeCloseTo(plain.sums.loss, 6);
      expect(plain.grad.some((g) => Math.abs(g) > 1e-3)).toBe(true);
      // Every weight is 1: Σw = trained tokens, nothing truncated.
      expect(corrected.sums.isWeightSum).toBeCloseTo(12, 5);
      expect(corrected.sums.isTruncated).toBe(0);
      expect(plain.sums.isWeightSum).toBeUndefined();
    });
  }

  it('equals uncorrected CISPO with the band [0, 5] when the cap is 5, however stale the sampler', async () => {
    // CISPO's weight sg(clip(π/π_s, 0, 5)) and TIS's sg(min(π/π_s, 5)) times a ratio of 1 against
    // π_prox = π are the same number for every token, so the gradients agree for any sampler.
    const stale = (current: number[]) =>
      current.map((value, i) => value + 1.5 * (numbers(B * T, 9)[i] as number) * 4);
    const cispo: GrpoLossOptions = {
      lossKind: 'cispo',
      clip: { low: 1, high: 4 },
      aggregation: 'token-mean',
      beta: 0,
    };
    const plain = await lossAndGrad(theta, stale, cispo);
    const corrected = await lossAndGrad(theta, stale, { ...cispo, correction: { kind: 'tis', cap: 5 } });
    expectClose(corrected.grad, plain.grad, 1e-6);
    expect(corrected.sums.isTruncated).toBeGreaterThan(0); // the draw reaches the cap somewhere
    expect(corrected.sums.isWeightMax).toBeLessThanOrEqual(5);
  });

  it('weights each token by the truncated ratio: the gradient is −w·A·∇ℓ / N (independent formula)', async () => {
    const stale = (current: number[]) =>
      current.map((value, i) => value - 2 * (numbers(B * T, 13)[i] as number));
    const cap = 1.5;
    const corrected = await lossAndGrad(theta, stale, {
      lossKind: 'ppo-clip',
      clip: { low: 0.2, high: 0.28 },
      aggregation: 'token-mean',
      beta: 0,
      correction: { kind: 'tis', cap },
    });
    // ℓ = −softplus(θ) → ∂ℓ/∂θ = −σ(θ). With ratio 1 against π_prox, PPO's surrogate is r·A (no clip
    // binds), so ∂L/∂θ_t = −w_t·A_b·(−σ(θ_t)) / N on trained tokens, 0 elsewhere.
    const current = theta.map((x) => -Math.log1p(Math.exp(x)));
    const sampler = stale(current);
    const tokens = lengths.reduce((a, b) => a + b, 0);
    const expected = theta.map((x, i) => {
      const [b, t] = [Math.floor(i / T), i % T];
      if ((maskRows[b]?.[t] ?? 0) === 0) return 0;
      const w = referenceWeight(current[i] as number, sampler[i] as number, cap, true);
      const sigma = 1 / (1 + Math.exp(-x));
      return (-w * (advantages[b] as number) * -sigma) / tokens;
    });
    expectClose(corrected.grad, expected, 1e-6);
    expect(corrected.sums.isWeightMax).toBeLessThanOrEqual(cap);
  });

  it('refuses a correction without proximal log-probs', () => {
    tf.tidy(() => {
      expect(() =>
        grpoLoss(
          {
            lossKind: 'cispo',
            clip: { low: 1, high: 4 },
            aggregation: 'token-mean',
            beta: 0,
            correction: { kind: 'tis', cap: 2 },
          },
          {
            logprobs: tf.zeros([1, 2]) as tf.Tensor2D,
            oldLogprobs: tf.zeros([1, 2]) as tf.Tensor2D,
            advantages: tf.tensor1d([1]),
            mask: tf.ones([1, 2]) as tf.Tensor2D,
          },
        ),
      ).toThrow(/proximalLogprobs/);
    });
  });
});
