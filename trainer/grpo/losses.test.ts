import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectClose } from '../../test/support/max-difference.ts';
import { cispoLoss, ppoClipLoss, type TokenLossInput, tokenLosses } from './losses.ts';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

// Hand example, B = 2, T = 4. Sampling log-probs are chosen so the ratios are round numbers:
//   o = ℓ − ln ρ   with ρ = [[1.1, 1.5, 0.5, 0.9], [0.7, 1.0, 1.3, ·]]
// Sequence 1's last token is masked off and its sampling log-prob is NaN (as stored off the mask).
const logprobs = [
  [-1, -0.5, -2, -0.25],
  [-0.3, -1.2, -0.8, -0.6],
];
const ratios = [
  [1.1, 1.5, 0.5, 0.9],
  [0.7, 1.0, 1.3, Number.NaN],
];
const oldLogprobs = logprobs.map((row, b) => row.map((l, t) => l - Math.log(ratios[b]?.[t] ?? Number.NaN)));
const mask = [
  [1, 1, 1, 1],
  [1, 1, 1, 0],
];
const advantages = [1, -2];
// Both tests use the band [1 − 0.2, 1 + 0.28] = [0.8, 1.28] (DAPO's).
const band = { low: 0.2, high: 0.28 };

function input(l: tf.Tensor2D, advantageTensor?: tf.Tensor1D | tf.Tensor2D): TokenLossInput {
  return {
    logprobs: l,
    oldLogprobs: tf.tensor2d(oldLogprobs),
    advantages: advantageTensor ?? tf.tensor1d(advantages),
    mask: tf.tensor2d(mask),
  };
}

/** Loss values, ∂Σloss/∂ℓ and the indicators, all read back as flat arrays. */
function run(kind: 'ppo-clip' | 'cispo', clip: { low: number; high: number }) {
  return tf.tidy(() => {
    const l = tf.tensor2d(logprobs);
    const lossOf = (x: tf.Tensor) => tf.sum(tokenLosses[kind](input(x as tf.Tensor2D), clip).loss);
    const out = tokenLosses[kind](input(l), clip);
    return {
      loss: out.loss.dataSync(),
      grad: tf.grad(lossOf)(l).dataSync(),
      ratio: out.ratio.dataSync(),
      low: out.clippedLow.dataSync(),
      high: out.clippedHigh.dataSync(),
    };
  });
}

describe('ppo-clip', () => {
  it('matches hand-computed values and gradients', () => {
    // L = −min(ρA, clip(ρ, 0.8, 1.28)·A); gradient −A·ρ on the unclipped branch, 0 on the clipped one.
    // seq 0, A = 1:  ρ 1.1 in band → −1.1 (grad −1.1)
    //                ρ 1.5 → min(1.5, 1.28) = 1.28 → −1.28, clipped high (grad 0)
    //                ρ 0.5 → min(0.5, 0.8) = 0.5 → −0.5, unclipped branch (grad −0.5)
    //                ρ 0.9 in band → −0.9 (grad −0.9)
    // seq 1, A = −2: ρ 0.7 → min(−1.4, −1.6) = −1.6 → 1.6, clipped low (grad 0)
    //                ρ 1.0 → 2 (grad −A·ρ = 2)
    //                ρ 1.3 → min(−2.6, −2.56) = −2.6 → 2.6, unclipped branch (grad 2.6)
    //                masked → 0
    const out = run('ppo-clip', band);
    expectClose(out.loss, [-1.1, -1.28, -0.5, -0.9, 1.6, 2, 2.6, 0], 1e-5);
    expectClose(out.grad, [-1.1, 0, -0.5, -0.9, 0, 2, 2.6, 0], 1e-5);
    expectClose(out.ratio, [1.1, 1.5, 0.5, 0.9, 0.7, 1, 1.3, 0], 1e-5);
    expectClose(out.low, [0, 0, 0, 0, 1, 0, 0, 0], 0);
    expectClose(out.high, [0, 1, 0, 0, 0, 0, 0, 0], 0);
  });
});

describe('cispo', () => {
  it('matches hand-computed values, and its gradient is −w·A (weight stop-gradiented)', () => {
    // w = sg(clip(ρ, 0.8, 1.28)), L = −w·A·ℓ, ∂L/∂ℓ = −w·A
    // seq 0, A = 1:  w = [1.1, 1.28, 0.8, 0.9]
    //   L = −w·ℓ = [1.1·1, 1.28·0.5, 0.8·2, 0.9·0.25] = [1.1, 0.64, 1.6, 0.225]; grad −w = [−1.1, −1.28, −0.8, −0.9]
    // seq 1, A = −2: w = [0.8, 1.0, 1.28, ·]
    //   L = 2·w·ℓ = [2·0.8·−0.3, 2·1·−1.2, 2·1.28·−0.8, 0] = [−0.48, −2.4, −2.048, 0]; grad 2w = [1.6, 2, 2.56, 0]
    // Without the stop-gradient seq 0 token 0 would get −A·ρ·(1 + ℓ) = 0 instead of −1.1.
    const out = run('cispo', band);
    expectClose(out.loss, [1.1, 0.64, 1.6, 0.225, -0.48, -2.4, -2.048, 0], 1e-5);
    expectClose(out.grad, [-1.1, -1.28, -0.8, -0.9, 1.6, 2, 2.56, 0], 1e-5);
    // clipped whatever the sign of A: ρ < 0.8 at (0,2), (1,0); ρ > 1.28 at (0,1), (1,2)
    expectClose(out.low, [0, 0, 1, 0, 1, 0, 0, 0], 0);
    expectClose(out.high, [0, 1, 0, 0, 0, 0, 1, 0], 0);
  });

  it("caps the weight at 5 with ART's default band [1 − 1, 1 + 4]", () => {
    // ρ = 6 → w = 5, ℓ = −1, A = 0.5: L = −5·0.5·−1 = 2.5, grad −2.5, clipped high
    // ρ = 4 → w = 4, ℓ = −2:          L = −4·0.5·−2 = 4,   grad −2
    const l = [[-1, -2]];
    const old = [[-1 - Math.log(6), -2 - Math.log(4)]];
    const result = tf.tidy(() => {
      const make = (x: tf.Tensor) =>
        cispoLoss(
          {
            logprobs: x as tf.Tensor2D,
            oldLogprobs: tf.tensor2d(old),
            advantages: tf.tensor1d([0.5]),
            mask: tf.tensor2d([[1, 1]]),
          },
          { low: 1, high: 4 },
        );
      const x = tf.tensor2d(l);
      const out = make(x);
      return {
        loss: out.loss.dataSync(),
        grad: tf
          .grad((y: tf.Tensor) => tf.sum(make(y).loss))(x)
          .dataSync(),
        high: out.clippedHigh.dataSync(),
      };
    });
    expectClose(result.loss, [2.5, 4], 1e-5);
    expectClose(result.grad, [-2.5, -2], 1e-5);
    expectClose(result.high, [1, 0], 0);
  });

  it('back-propagates −w·A·∂ℓ/∂θ into logits through a log-softmax', () => {
    // One token, vocabulary 3, logits θ = [1, 2, 0], sampled token 1, ρ = 2 → w = clip(2, 0.8, 1.28) = 1.28,
    // A = 0.5. ∂ℓ/∂θ = onehot − softmax(θ); softmax computed below in plain JS (independent of tfjs).
    const logits = [1, 2, 0];
    const z = logits.reduce((sum, v) => sum + Math.exp(v), 0);
    const softmax = logits.map((v) => Math.exp(v) / z); // [0.24472847, 0.66524096, 0.09003057]
    const sampledLogprob = Math.log(softmax[1] as number);
    const expected = [0, 1, 0].map((onehot, i) => -1.28 * 0.5 * (onehot - (softmax[i] as number)));
    const grad = tf.tidy(() => {
      const theta = tf.tensor3d([[logits]]); // [B=1, T=1, V=3]
      return tf
        .grad((t: tf.Tensor) => {
          const l = tf.sum(tf.mul(tf.logSoftmax(t), tf.oneHot([[1]], 3)), -1) as tf.Tensor2D; // [1, 1]
          const out = cispoLoss(
            {
              logprobs: l,
              oldLogprobs: tf.tensor2d([[sampledLogprob - Math.log(2)]]),
              advantages: tf.tensor1d([0.5]),
              mask: tf.tensor2d([[1]]),
            },
            band,
          );
          return tf.sum(out.loss);
        })(theta)
        .dataSync();
    });
    expectClose(grad, expected, 1e-6);
  });
});

describe('token losses, shared behaviour', () => {
  it('accepts per-token [B, T] advantages equal to the per-sequence [B] ones', () => {
    for (const kind of ['ppo-clip', 'cispo'] as const) {
      const [fromB, fromBT] = tf.tidy(() => {
        const l = tf.tensor2d(logprobs);
        const perToken = tf.tensor2d([
          [1, 1, 1, 1],
          [-2, -2, -2, -2],
        ]);
        return [
          tokenLosses[kind](input(l), band).loss.dataSync(),
          tokenLosses[kind](input(l, perToken), band).loss.dataSync(),
        ];
      });
      expectClose(fromBT as Float32Array, Array.from(fromB as Float32Array), 0);
    }
  });

  it('keeps NaN off the mask out of values and gradients', () => {
    for (const kind of ['ppo-clip', 'cispo'] as const) {
      const out = run(kind, band);
      for (const values of [out.loss, out.grad, out.ratio]) expect(values.every(Number.isFinite)).toBe(true);
    }
  });

  it('names mismatched shapes and bad clip bounds', () => {
    tf.tidy(() => {
      const l = tf.tensor2d(logprobs);
      const bad = { ...input(l), mask: tf.ones([2, 3]) as tf.Tensor2D };
      expect(() => ppoClipLoss(bad, band)).toThrow(/mask must match logprobs \[2, 4\], got \[2,3\]/);
      const badAdvantages = { ...input(l), advantages: tf.tensor1d([1, 2, 3]) };
      expect(() => cispoLoss(badAdvantages, band)).toThrow(/advantages \[B\] must have B = 2/);
      expect(() => cispoLoss(input(l), { low: 1.5, high: 4 })).toThrow(/clip.low must be in \[0, 1\]/);
      expect(() => ppoClipLoss(input(l), { low: 0.2, high: -1 })).toThrow(/clip.high/);
    });
  });

  it('leaves no tensors behind besides its outputs', () => {
    const keep = tf.tidy(() => [tf.tensor2d(logprobs), tf.tensor2d(oldLogprobs), tf.tensor1d(advantages)]);
    const m = tf.tensor2d(mask);
    const before = tf.memory().numTensors;
    for (const kind of ['ppo-clip', 'cispo'] as const) {
      const [l, o, a] = keep as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D];
      const out = tokenLosses[kind]({ logprobs: l, oldLogprobs: o, advantages: a, mask: m }, band);
      expect(tf.memory().numTensors).toBe(before + 4); // loss, ratio, clippedLow, clippedHigh
      tf.dispose(Object.values(out));
    }
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([...keep, m]);
  });
});
