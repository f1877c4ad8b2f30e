// Per-token KL penalty against a reference policy (the base model, adapter off), k3 estimator.
// How the reference log-probs are computed, and the coefficient, belong to the caller (beta default 0).
//
// Legend: B = sequences in the micro-batch, T = padded tokens per sequence.
// k3 (Schulman, "Approximating KL Divergence", 2020, joschu.net/blog/kl-approx.html): with tokens sampled
// from the policy and log r = ℓ_ref − ℓ,  k3 = exp(ℓ_ref − ℓ) − (ℓ_ref − ℓ) − 1  ≥ 0, an unbiased,
// low-variance estimate of KL(π ‖ π_ref). DeepSeekMath (arXiv:2402.03300 eq. 4) adds it to the GRPO loss.
// Our samples come from the sampler π_old, not π_θ: the usual small bias, as in DeepSeekMath, TRL and ART.
import * as tf from '@tensorflow/tfjs';

/** [B, T] k3 per token, 0 off the mask; gradients flow through `logprobs` only. */
export function klK3(logprobs: tf.Tensor2D, refLogprobs: tf.Tensor2D, mask: tf.Tensor2D): tf.Tensor2D {
  for (const [name, tensor] of [
    ['refLogprobs', refLogprobs],
    ['mask', mask],
  ] as const) {
    if (tensor.rank !== 2 || tensor.shape[0] !== logprobs.shape[0] || tensor.shape[1] !== logprobs.shape[1]) {
      throw new RangeError(`${name} must match logprobs [${logprobs.shape}], got [${tensor.shape}]`);
    }
  }
  return tf.tidy(() => {
    const on = tf.greater(tf.cast(mask, 'float32'), 0); // [B, T] bool
    // `where`, not a multiply by 0, so NaN off the mask stays out of values and gradients.
    const logRatio = tf.where(on, tf.sub(refLogprobs, logprobs), tf.zerosLike(logprobs)); // [B, T]
    const k3 = tf.sub(tf.sub(tf.exp(logRatio), logRatio), 1); // [B, T]
    return tf.mul(k3, tf.cast(on, 'float32')) as tf.Tensor2D; // [B, T]
  });
}
