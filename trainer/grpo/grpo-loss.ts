// One micro-batch's GRPO objective: the chosen token loss plus beta·k3 KL, aggregated with the step's
// normaliser, and the masked sums the step record is built from. Tensors in, tensors out; reading the
// sums back (`readLossSums`) is the one async step, done outside any gradient tape.
//
// Legend: B = sequences in the micro-batch, T = padded tokens per sequence.
// Total per token: L_t + beta·k3_t, then aggregated (DeepSeekMath eq. 3; TRL and ART v0.4 likewise add
// the KL per token before reducing). Aggregation is linear, so loss = policy + beta·kl exactly.
// With a rollout correction (rollout-correction.ts) the token loss takes its ratio against the
// proximal log-probs and is multiplied by the truncated weight π_prox / π_sampler; without one it is
// exactly the loss it always was (the ratio against the sampler's log-probs).
import * as tf from '@tensorflow/tfjs';
import { type Aggregation, aggregations, type StepNormaliser } from './aggregate.ts';
import { klK3 } from './kl.ts';
import { type ClipBounds, type LossKind, type TokenLossInput, tokenLosses } from './losses.ts';
import { truncatedImportanceWeights } from './rollout-correction.ts';
import type { RolloutCorrection } from './rollout-correction-kinds.ts';

export interface GrpoLossOptions {
  readonly lossKind: LossKind;
  readonly clip: ClipBounds;
  readonly aggregation: Aggregation;
  /** KL coefficient; > 0 needs `refLogprobs`. */
  readonly beta: number;
  /** Truncated importance sampling against the sampler; needs `proximalLogprobs`. Absent: none. */
  readonly correction?: RolloutCorrection;
}

export interface GrpoLossInput extends TokenLossInput {
  /** [B, T] log-probs under the reference (adapter off). Needed when beta > 0; if given with beta 0 the
   *  KL is only measured. */
  readonly refLogprobs?: tf.Tensor2D;
  /** [B, T] log-probs under the proximal policy (the step's starting adapter); with a correction
   *  they are the ratio's denominator and `oldLogprobs` (the sampler's) only enter the weight. */
  readonly proximalLogprobs?: tf.Tensor2D;
}

/** Scalar tensors summed over this micro-batch's trained tokens. A type, not an interface, so it fits
 *  tfjs's TensorContainer (tf.tidy can return it). */
export type LossSumTensors = {
  /** This micro-batch's share of the step loss (what gradients are taken of). */
  readonly loss: tf.Scalar;
  /** The policy part of `loss`. */
  readonly policyLoss: tf.Scalar;
  /** The aggregated k3 (before beta), when reference log-probs were given. */
  readonly kl?: tf.Scalar;
  /** Σ k3·m, when reference log-probs were given. */
  readonly klSum?: tf.Scalar;
  readonly tokens: tf.Scalar;
  readonly sequences: tf.Scalar;
  readonly ratioSum: tf.Scalar;
  readonly clippedLow: tf.Scalar;
  readonly clippedHigh: tf.Scalar;
  /** With a correction: Σ w·m, max w, Σ m where the cap bound, Σ untruncated ratio·m, its max. */
  readonly isWeightSum?: tf.Scalar;
  readonly isWeightMax?: tf.Scalar;
  readonly isTruncated?: tf.Scalar;
  readonly isRatioSum?: tf.Scalar;
  readonly isRatioMax?: tf.Scalar;
};

export type LossSums = { readonly [K in keyof LossSumTensors]: number };

export function grpoLoss(
  options: GrpoLossOptions,
  input: GrpoLossInput,
  step?: StepNormaliser,
): LossSumTensors {
  if (!(options.beta >= 0)) throw new RangeError(`beta must be >= 0, got ${options.beta}`);
  if (options.beta > 0 && input.refLogprobs === undefined) {
    throw new RangeError(
      `beta is ${options.beta} but no refLogprobs were given: compute them with the adapter off`,
    );
  }
  const lossFn = tokenLosses[options.lossKind];
  const aggregate = aggregations[options.aggregation];
  if (!lossFn) throw new RangeError(`unknown lossKind "${options.lossKind}"`);
  if (!aggregate) throw new RangeError(`unknown aggregation "${options.aggregation}"`);
  const { correction } = options;
  if (correction && input.proximalLogprobs === undefined) {
    throw new RangeError(
      'a rollout correction needs proximalLogprobs (the step start adapter log-probs, detached)',
    );
  }
  return tf.tidy(() => {
    if (!correction) return lossSums(lossFn(input, options.clip), {});
    const proximal = input.proximalLogprobs as tf.Tensor2D;
    const is = truncatedImportanceWeights(
      { proximalLogprobs: proximal, samplerLogprobs: input.oldLogprobs, mask: input.mask },
      correction.cap,
    );
    const token = lossFn({ ...input, oldLogprobs: proximal }, options.clip); // each [B, T]
    return lossSums(
      { ...token, loss: tf.mul(token.loss, is.weight) as tf.Tensor2D },
      {
        isWeightSum: tf.sum(is.weight) as tf.Scalar,
        isWeightMax: tf.max(is.weight) as tf.Scalar,
        isTruncated: tf.sum(is.truncated) as tf.Scalar,
        isRatioSum: tf.sum(is.ratio) as tf.Scalar,
        isRatioMax: tf.max(is.ratio) as tf.Scalar,
      },
    );
  });

  function lossSums(
    token: ReturnType<typeof lossFn>,
    correctionSums: Partial<LossSumTensors>,
  ): LossSumTensors {
    const policyLoss = aggregate(token.loss, input.mask, step); // []
    const maskF = tf.cast(tf.greater(tf.cast(input.mask, 'float32'), 0), 'float32'); // [B, T]
    const common = {
      policyLoss,
      tokens: tf.sum(maskF) as tf.Scalar,
      sequences: tf.sum(tf.cast(tf.greater(tf.sum(maskF, 1), 0), 'float32')) as tf.Scalar, // [B] → []
      ratioSum: tf.sum(token.ratio) as tf.Scalar,
      clippedLow: tf.sum(token.clippedLow) as tf.Scalar,
      clippedHigh: tf.sum(token.clippedHigh) as tf.Scalar,
      ...correctionSums,
    };
    if (input.refLogprobs === undefined) return { loss: policyLoss.clone(), ...common };
    const k3 = klK3(input.logprobs, input.refLogprobs, input.mask); // [B, T]
    const kl = aggregate(k3, input.mask, step); // []
    const loss = tf.add(policyLoss, tf.mul(kl, options.beta)) as tf.Scalar;
    return { loss, kl, klSum: tf.sum(k3) as tf.Scalar, ...common };
  }
}

/** Reads the sums back as numbers in one read (async: the WebGPU backend has no sync reads; one
 *  read is one device round trip, not one per sum) and disposes them. */
export async function readLossSums(sums: LossSumTensors): Promise<LossSums> {
  const entries = Object.entries(sums) as [keyof LossSumTensors, tf.Scalar][];
  const stacked = tf.stack(entries.map(([, tensor]) => tensor));
  const values = await stacked.data();
  tf.dispose([stacked, ...entries.map(([, tensor]) => tensor)]);
  return Object.fromEntries(entries.map(([key], index) => [key, values[index] as number])) as LossSums;
}
