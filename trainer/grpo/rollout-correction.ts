// Rollout correction for off-policy samples: truncated importance sampling (TIS) between the policy
// being trained and the one that sampled the tokens. Tensors in, tensors out; no Node built-ins.
//
// Legend: B = sequences in the micro-batch, T = padded tokens per sequence.
// Decoupled objective (Hilton et al. 2022, "Batch size-invariance for policy optimization",
// arXiv:2110.00641; AReaL's decoupled PPO, arXiv:2505.24298 §5): the clipped ratio is taken against a
// proximal policy π_prox (the trust region), and each token's loss is weighted by the behaviour
// correction π_prox / π_sampler. Truncated at C (Yao et al. 2025, "Your Efficient RL Framework
// Secretly Brings You Off-Policy RL Training", https://fengyao.notion.site/off-policy-rl; verl's
// rollout correction, token level, mode `truncate`, verl #3694):
//   w_t = sg(min(exp(ℓ_prox,t − o_t), C))
// where o is the sampler's recorded log-prob. Only the top is truncated: a token the sampler found
// likelier than the trainer does keeps its small weight (that is the correction).
// π_prox here is the adapter at the start of the optimiser step. edgerl takes one step per batch, so
// the proximal log-probs are the training forward's own values, detached (TRL's GRPOTrainer does the
// same when num_iterations is 1): no second forward pass.
import * as tf from '@tensorflow/tfjs';
import { logRatioBound } from './rollout-correction-kinds.ts';
import { stopGradient } from './stop-gradient.ts';

export interface ImportanceWeightInput {
  /** [B, T] log-probs under the proximal policy (no gradient is taken through them). */
  readonly proximalLogprobs: tf.Tensor2D;
  /** [B, T] log-probs the sampler recorded; any value (NaN too) where the mask is 0. */
  readonly samplerLogprobs: tf.Tensor2D;
  /** [B, T] 1 on trained tokens. */
  readonly mask: tf.Tensor2D;
}

export type ImportanceWeights = {
  /** [B, T] min(π_prox / π_sampler, cap), 0 off the mask; gradient-free. */
  readonly weight: tf.Tensor2D;
  /** [B, T] the untruncated ratio π_prox / π_sampler, 0 off the mask (for the step's statistics). */
  readonly ratio: tf.Tensor2D;
  /** [B, T] 1 where the cap bound (ratio > cap), else 0. */
  readonly truncated: tf.Tensor2D;
};

export function checkCap(cap: number): void {
  if (!(cap >= 1) || !(cap < Math.exp(logRatioBound))) {
    throw new RangeError(`the importance-weight cap must be at least 1 and below e^20, got ${cap}`);
  }
}

/** Per-token truncated importance weights; see the header for the formula and its sources. */
export function truncatedImportanceWeights(input: ImportanceWeightInput, cap: number): ImportanceWeights {
  checkCap(cap);
  return tf.tidy(() => {
    const on = tf.greater(tf.cast(input.mask, 'float32'), 0); // [B, T] bool
    const maskF = tf.cast(on, 'float32'); // [B, T]
    const zeros = tf.zerosLike(maskF); // [B, T]
    // `where` before exp: off-mask entries may be NaN, and NaN·0 would stay NaN. The log-ratio is
    // clamped to ±20 before exp, as verl's rollout correction does, so the statistics stay finite;
    // any cap below e^20 truncates the same weights.
    const difference = tf.sub(stopGradient(input.proximalLogprobs), input.samplerLogprobs); // [B, T]
    const delta = tf.where(on, tf.clipByValue(difference, -logRatioBound, logRatioBound), zeros); // [B, T]
    const ratio = tf.mul(tf.exp(delta), maskF) as tf.Tensor2D; // [B, T]
    const weight = tf.mul(tf.minimum(ratio, cap), maskF) as tf.Tensor2D; // [B, T]
    const truncated = tf.mul(tf.cast(tf.greater(ratio, cap), 'float32'), maskF) as tf.Tensor2D; // [B, T]
    return { weight, ratio, truncated };
  });
}
