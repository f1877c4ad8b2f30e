// Per-token GRPO policy losses, PPO-style clipped ratio and CISPO, as [B, T] tensors with their clip
// indicators. Aggregation over tokens (aggregate.ts) and the KL term (kl.ts) are separate.
//
// Legend: B = sequences in the micro-batch, T = padded tokens per sequence.
// ρ_t = exp(ℓ_t − o_t): importance ratio of the current policy's log-prob ℓ against the sampling
// log-prob o recorded at inference (π_old is the sampler, as in ART; no extra forward pass).
// Clip band convention (ART, OpenPipe/ART src/art/loss.py): ρ is clipped to [1 − low, 1 + high].
// TRL's `cispo` instead caps ρ at `epsilon_high` itself (5.0 there = 1 + 4.0 here): same cap.
import * as tf from '@tensorflow/tfjs';
import { stopGradient } from './stop-gradient.ts';

export type LossKind = 'ppo-clip' | 'cispo';

/** Clip band for the ratio: [1 − low, 1 + high]. */
export interface ClipBounds {
  readonly low: number;
  readonly high: number;
}

export interface TokenLossInput {
  /** [B, T] log-probs of the sampled tokens under the current policy; gradients flow through these. */
  readonly logprobs: tf.Tensor2D;
  /** [B, T] log-probs recorded by the sampler; any value (NaN too) where the mask is 0. */
  readonly oldLogprobs: tf.Tensor2D;
  /** [B] one advantage per sequence, or [B, T] per token. */
  readonly advantages: tf.Tensor1D | tf.Tensor2D;
  /** [B, T] 1 on trained (assistant, sampled) tokens, 0 elsewhere. */
  readonly mask: tf.Tensor2D;
}

export type TokenLosses = {
  /** [B, T] loss per token, 0 off the mask. */
  readonly loss: tf.Tensor2D;
  /** [B, T] importance ratio ρ, 0 off the mask (so its masked sum over Σmask is the mean). */
  readonly ratio: tf.Tensor2D;
  /** [B, T] 1 where the lower clip bound binds (see each loss for what "binds" means), else 0. */
  readonly clippedLow: tf.Tensor2D;
  /** [B, T] 1 where the upper clip bound binds, else 0. */
  readonly clippedHigh: tf.Tensor2D;
};

export type TokenLossFn = (input: TokenLossInput, clip: ClipBounds) => TokenLosses;

/**
 * PPO clipped surrogate with separate low/high bounds (DAPO's clip-higher, Yu et al. 2025,
 * arXiv:2503.14476; GRPO objective in DeepSeekMath, arXiv:2402.03300 eq. 3):
 *   L_t = −min(ρ_t·A_t, clip(ρ_t, 1 − low, 1 + high)·A_t)
 * The clipped branch has zero gradient, so "clipped" counts the tokens where it is the minimum and
 * differs: ρ < 1 − low with A < 0, or ρ > 1 + high with A > 0 (TRL's clip_ratio/low and /high).
 */
export function ppoClipLoss(input: TokenLossInput, clip: ClipBounds): TokenLosses {
  checkClip(clip);
  return tf.tidy(() => {
    const { maskF, advantages, ratio } = prepare(input);
    const clipped = tf.clipByValue(ratio, 1 - clip.low, 1 + clip.high); // [B, T]
    const surrogate = tf.minimum(tf.mul(ratio, advantages), tf.mul(clipped, advantages)); // [B, T]
    const loss = tf.mul(tf.neg(surrogate), maskF) as tf.Tensor2D; // [B, T]
    const low = tf.logicalAnd(tf.less(ratio, 1 - clip.low), tf.less(advantages, 0)); // [B, T]
    const high = tf.logicalAnd(tf.greater(ratio, 1 + clip.high), tf.greater(advantages, 0)); // [B, T]
    return {
      loss,
      ratio: tf.mul(ratio, maskF) as tf.Tensor2D,
      clippedLow: tf.mul(tf.cast(low, 'float32'), maskF) as tf.Tensor2D,
      clippedHigh: tf.mul(tf.cast(high, 'float32'), maskF) as tf.Tensor2D,
    };
  });
}

/**
 * CISPO (MiniMax-M1, arXiv:2506.13585 §3.1): clip the importance weight, not the update, and stop its
 * gradient, so every token keeps a gradient −sg(w_t)·A_t·∇ℓ_t with a bounded weight:
 *   L_t = −sg(clip(ρ_t, 1 − low, 1 + high))·A_t·ℓ_t
 * "Clipped" counts tokens whose weight was clipped, whatever the sign of A.
 */
export function cispoLoss(input: TokenLossInput, clip: ClipBounds): TokenLosses {
  checkClip(clip);
  return tf.tidy(() => {
    const { logprobs, maskF, advantages, ratio } = prepare(input);
    const weight = stopGradient(tf.clipByValue(ratio, 1 - clip.low, 1 + clip.high)); // [B, T]
    const loss = tf.mul(tf.neg(tf.mul(tf.mul(weight, advantages), logprobs)), maskF) as tf.Tensor2D; // [B, T]
    return {
      loss,
      ratio: tf.mul(ratio, maskF) as tf.Tensor2D,
      clippedLow: tf.mul(tf.cast(tf.less(ratio, 1 - clip.low), 'float32'), maskF) as tf.Tensor2D,
      clippedHigh: tf.mul(tf.cast(tf.greater(ratio, 1 + clip.high), 'float32'), maskF) as tf.Tensor2D,
    };
  });
}

export const tokenLosses = {
  'ppo-clip': ppoClipLoss,
  cispo: cispoLoss,
} satisfies Record<LossKind, TokenLossFn>;

/** Shape checks, then the masked log-probs, [B, T] advantages and ratio every loss starts from. */
function prepare(input: TokenLossInput) {
  const [batch, tokens] = checkShapes(input);
  const on = tf.greater(tf.cast(input.mask, 'float32'), 0); // [B, T] bool (mask may be bool/int/float)
  const maskF = tf.cast(on, 'float32'); // [B, T]
  const zeros = tf.zeros([batch, tokens]); // [B, T]
  // Off-mask entries may be NaN (no sampling log-prob there); `where` keeps them out of values and
  // gradients, which a multiply by 0 would not (NaN·0 = NaN).
  const logprobs = tf.where(on, input.logprobs, zeros); // [B, T]
  const delta = tf.where(on, tf.sub(input.logprobs, input.oldLogprobs), zeros); // [B, T]
  const perToken = input.advantages.rank === 1 ? tf.reshape(input.advantages, [batch, 1]) : input.advantages; // [B, 1] | [B, T]
  const advantages = tf.where(on, tf.mul(perToken, tf.onesLike(maskF)), zeros); // [B, T]
  return { logprobs, maskF, advantages, ratio: tf.exp(delta) }; // ratio: [B, T]
}

function checkShapes(input: TokenLossInput): [number, number] {
  const { logprobs, oldLogprobs, advantages, mask } = input;
  if (logprobs.rank !== 2) throw new RangeError(`logprobs must be [B, T], got shape [${logprobs.shape}]`);
  const [batch, tokens] = logprobs.shape;
  const same = (name: string, tensor: tf.Tensor) => {
    if (tensor.rank !== 2 || tensor.shape[0] !== batch || tensor.shape[1] !== tokens) {
      throw new RangeError(`${name} must match logprobs [${batch}, ${tokens}], got [${tensor.shape}]`);
    }
  };
  same('oldLogprobs', oldLogprobs);
  same('mask', mask);
  if (advantages.rank === 1) {
    if (advantages.shape[0] !== batch) {
      throw new RangeError(`advantages [B] must have B = ${batch}, got [${advantages.shape}]`);
    }
  } else {
    same('advantages', advantages);
  }
  return [batch, tokens];
}

function checkClip(clip: ClipBounds): void {
  if (!(clip.low >= 0 && clip.low <= 1)) {
    throw new RangeError(`clip.low must be in [0, 1] (lower ratio bound 1 − low >= 0), got ${clip.low}`);
  }
  if (!(clip.high >= 0) || !Number.isFinite(clip.high)) {
    throw new RangeError(`clip.high must be a finite number >= 0, got ${clip.high}`);
  }
}
