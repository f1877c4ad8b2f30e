// Reduces per-token losses [B, T] to the micro-batch's share of the step's scalar loss.
// The normaliser is the whole optimiser step's (not the micro-batch's), so the micro-batch losses and
// gradients add up exactly to those of the full batch however the step is split.
//
// Legend: B = sequences in the micro-batch, T = padded tokens per sequence, m = mask.
// token-mean (DAPO, arXiv:2503.14476 §3.3 "token-level policy gradient loss"; TRL `dapo`, verl default):
//   Σ_{b,t} L·m / N_step, N_step = trained tokens in the step. Every token weighs the same, so long
//   episodes are not diluted. (Dr. GRPO, arXiv:2503.20783, goes further with a constant normaliser.)
// sequence-mean (DeepSeekMath GRPO, arXiv:2402.03300 eq. 3):
//   Σ_b (Σ_t L·m / Σ_t m) / S_step, S_step = sequences with at least one trained token in the step.
//   Each episode weighs the same; Dr. GRPO shows this biases towards longer wrong answers.
import * as tf from '@tensorflow/tfjs';

export type Aggregation = 'token-mean' | 'sequence-mean';

/** Totals over the whole optimiser step (all micro-batches). */
export interface StepNormaliser {
  /** Trained (mask = 1) tokens in the step. */
  readonly tokens: number;
  /** Sequences with at least one trained token in the step. */
  readonly sequences: number;
}

/** When `step` is omitted the micro-batch is taken to be the whole step. */
export type AggregateFn = (values: tf.Tensor2D, mask: tf.Tensor2D, step?: StepNormaliser) => tf.Scalar;

export function tokenMean(values: tf.Tensor2D, mask: tf.Tensor2D, step?: StepNormaliser): tf.Scalar {
  checkStep(step);
  return tf.tidy(() => {
    const maskF = tf.cast(mask, 'float32'); // [B, T]
    const total = tf.sum(tf.mul(values, maskF)); // []
    // An empty micro-batch (Σm = 0) contributes 0 rather than 0/0.
    const normaliser = step ? tf.scalar(step.tokens) : tf.maximum(tf.sum(maskF), 1); // []
    return tf.div(total, normaliser) as tf.Scalar;
  });
}

export function sequenceMean(values: tf.Tensor2D, mask: tf.Tensor2D, step?: StepNormaliser): tf.Scalar {
  checkStep(step);
  return tf.tidy(() => {
    const maskF = tf.cast(mask, 'float32'); // [B, T]
    const lengths = tf.sum(maskF, 1); // [B]
    // A sequence without trained tokens has a 0 sum; dividing by max(len, 1) keeps it at 0.
    const perSequence = tf.div(tf.sum(tf.mul(values, maskF), 1), tf.maximum(lengths, 1)); // [B]
    const normaliser = step
      ? tf.scalar(step.sequences)
      : tf.maximum(tf.sum(tf.cast(tf.greater(lengths, 0), 'float32')), 1); // []
    return tf.div(tf.sum(perSequence), normaliser) as tf.Scalar;
  });
}

export const aggregations = {
  'token-mean': tokenMean,
  'sequence-mean': sequenceMean,
} satisfies Record<Aggregation, AggregateFn>;

/**
 * The step's normaliser from each sequence's trained-token count (known before any tensor exists, e.g.
 * from the trajectory store), so the first micro-batch can already be divided by the step's totals.
 */
export function stepNormaliser(trainedTokensPerSequence: readonly number[]): StepNormaliser {
  trainedTokensPerSequence.forEach((count, index) => {
    if (!Number.isInteger(count) || count < 0) {
      throw new RangeError(`trained token count of sequence ${index} must be an integer >= 0, got ${count}`);
    }
  });
  const tokens = trainedTokensPerSequence.reduce((sum, count) => sum + count, 0);
  const sequences = trainedTokensPerSequence.filter((count) => count > 0).length;
  if (tokens === 0) throw new RangeError('the step has no trained tokens: nothing to normalise by');
  return { tokens, sequences };
}

function checkStep(step: StepNormaliser | undefined): void {
  if (step === undefined) return;
  if (!(step.tokens > 0) || !(step.sequences > 0)) {
    throw new RangeError(
      `step normaliser needs tokens > 0 and sequences > 0, got tokens ${step.tokens}, sequences ${step.sequences}`,
    );
  }
}
