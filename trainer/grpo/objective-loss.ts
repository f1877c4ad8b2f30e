// What one micro-batch is trained to minimise, per objective: GRPO (the loss table of grpo-loss.ts,
// with untracked sampling log-probs taken as on-policy) or SFT (next-token negative log-likelihood).
// Tensors in, tensors out; the engine's forward pass and the gradient tape are the caller's.
// Every engine computes exactly these definitions: the PyTorch engine's copy is pinned to this file
// by test/fixtures/grpo/loss-vectors.json, which both test suites read.
//
// Legend: B = sequences in the micro-batch, T − 1 = predicted positions.
import * as tf from '@tensorflow/tfjs';
import { assertNever } from '../../protocol/statuses.ts';
import { type StepNormaliser, tokenMean } from './aggregate.ts';
import { type GrpoLossOptions, grpoLoss, type LossSumTensors } from './grpo-loss.ts';
import { stopGradient } from './stop-gradient.ts';

export type Objective = { readonly kind: 'grpo'; readonly loss: GrpoLossOptions } | { readonly kind: 'sft' };

/** One micro-batch's targets, laid out as tensors. */
export interface ObjectiveBatch {
  readonly mask: tf.Tensor2D; // [B, T−1] float32, 1 on trained tokens
  /** The mask times each sequence's loss weights (the mask itself where none has weights). */
  readonly weightedMask: tf.Tensor2D; // [B, T−1] float32
  readonly oldLogprobs: tf.Tensor2D; // [B, T−1], 0 where unknown
  readonly onPolicy: tf.Tensor2D; // [B, T−1] bool: trained without a sampling log-prob
  readonly advantages: tf.Tensor1D; // [B]
  readonly refLogprobs?: tf.Tensor2D; // [B, T−1], the adapter off; only when beta > 0
}

/** Builds the micro-batch's loss tensors from its policy logprobs; runs inside the gradient tape. */
export type ObjectiveLoss = (
  logprobs: tf.Tensor2D,
  batch: ObjectiveBatch,
  step: StepNormaliser,
) => LossSumTensors;

const objectiveLosses = {
  grpo: (options: GrpoLossOptions) => (logprobs, batch, step) => {
    // Trained tokens with no sampling logprob take the current one, detached: ratio ≡ 1 (on-policy).
    const current = stopGradient(logprobs); // [B, T−1]
    const old = tf.where(batch.onPolicy, current, batch.oldLogprobs) as tf.Tensor2D; // [B, T−1]
    return grpoLoss(
      options,
      {
        logprobs,
        oldLogprobs: old,
        advantages: batch.advantages,
        mask: batch.mask,
        ...(batch.refLogprobs ? { refLogprobs: batch.refLogprobs } : {}),
        // One optimiser step per batch: the proximal policy is this forward's adapter, so its
        // log-probs are these, detached (grpo/rollout-correction.ts); no second forward pass.
        ...(options.correction ? { proximalLogprobs: current } : {}),
      },
      step,
    );
  },
  // SFT: L = −Σ w·m·ℓ / N_step (token-mean over the step, as TRL's SFTTrainer averages over label
  // tokens; w = 1 unless the sequence weighs its tokens, TrainingSequence.lossWeights).
  sft: () => (logprobs, batch, step) =>
    tf.tidy(() => {
      const loss = tokenMean(tf.neg(logprobs) as tf.Tensor2D, batch.weightedMask, step); // []
      const tokens = tf.sum(batch.mask) as tf.Scalar; // []
      return {
        loss,
        policyLoss: loss.clone(),
        tokens,
        sequences: tf.sum(tf.cast(tf.greater(tf.sum(batch.mask, 1), 0), 'float32')) as tf.Scalar, // [B] → []
        ratioSum: tokens.clone(), // the ratio is 1 by definition
        clippedLow: tf.scalar(0),
        clippedHigh: tf.scalar(0),
      };
    }),
} satisfies {
  grpo: (options: GrpoLossOptions) => ObjectiveLoss;
  sft: () => ObjectiveLoss;
};

export function objectiveLoss(objective: Objective): ObjectiveLoss {
  switch (objective.kind) {
    case 'grpo':
      return objectiveLosses.grpo(objective.loss);
    case 'sft':
      return objectiveLosses.sft();
    default:
      return assertNever(objective, 'objective');
  }
}

/** The KL coefficient an objective asks for (0 unless GRPO with beta > 0): whether a reference forward is needed. */
export function objectiveBeta(objective: Objective): number {
  return objective.kind === 'grpo' ? objective.loss.beta : 0;
}
