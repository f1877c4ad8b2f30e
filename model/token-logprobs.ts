// log p(target | hidden) through the output projection, without keeping more than one chunk of
// [N, V] logits alive: forward and backward both walk the rows in chunks, and the gradient is
// d log p_y / dh = W[y] − Σ_v softmax(h·Wᵀ)_v · W[v].
// Only `hidden` receives a gradient (the head is frozen). Legend: N rows, D hidden, V vocab, n chunk.
//
// The log-sum-exp comes from the softmax, not from an exp of its own: with m = max_v l_v, the softmax
// at the arg max is exp(0) / Σ_v exp(l_v − m), so lse = m − log(max_v softmax(l)_v), and max softmax
// ≥ 1/V never underflows. On wasm the Softmax kernel is XNNPACK's and ≈ 5× faster than the Exp
// kernel a log-sum-exp spends (`npm run bench:train -- --profile`), and the backward pass needs that
// softmax anyway. When every row fits in one chunk the forward's probabilities are kept for the
// backward pass, which then skips recomputing the logits; more chunks recompute them, chunk by chunk.
import * as tf from '@tensorflow/tfjs';

/** Rows per chunk so that one chunk's logits stay near 8 Mi floats (32 MiB). */
export function chunkRows(vocabSize: number, maxFloats = 8 * 1024 * 1024): number {
  return Math.max(1, Math.floor(maxFloats / vocabSize));
}

function chunks(n: number, size: number): [number, number][] {
  const out: [number, number][] = [];
  for (let begin = 0; begin < n; begin += size) out.push([begin, Math.min(size, n - begin)]);
  return out;
}

/** logits [n, V] → (log p at `picks` (flat indices i·V + y_i, [n]), softmax [n, V]). */
function logprobsAndSoftmax(logits: tf.Tensor2D, picks: tf.Tensor1D): [tf.Tensor1D, tf.Tensor2D] {
  const probs = tf.softmax(logits); // [n, V]
  const lse = tf.sub(tf.max(logits, -1), tf.log(tf.max(probs, -1))); // [n]
  const picked = tf.gather(tf.reshape(logits, [-1]), picks); // [n]
  return [tf.sub(picked, lse) as tf.Tensor1D, probs];
}

/** (W[y] − softmaxᵀ·W) scaled per row by dy: the gradient of dy·log p with respect to the chunk's h. */
function hiddenGrad(probs: tf.Tensor2D, head: tf.Tensor2D, targets: tf.Tensor1D, dy: tf.Tensor1D): tf.Tensor {
  const expected = tf.matMul(probs, head); // [n, D]
  const chosen = tf.gather(head, targets); // [n, D]
  return tf.mul(tf.sub(chosen, expected), tf.reshape(dy, [-1, 1]));
}

/**
 * hidden [N, D], head [V, D] and its transpose headT [D, V], targets [N] int32 → log-probabilities [N].
 * Usable under a gradient tape: gradients flow into `hidden` only.
 */
export function headLogprobs(
  hidden: tf.Tensor2D,
  head: tf.Tensor2D,
  headT: tf.Tensor2D,
  targets: tf.Tensor1D,
  rowsPerChunk = chunkRows(head.shape[0]),
): tf.Tensor1D {
  const [n] = hidden.shape;
  const vocab = head.shape[0];
  if (targets.shape[0] !== n) throw new RangeError(`headLogprobs: ${n} rows but ${targets.shape[0]} targets`);
  const parts = chunks(n, rowsPerChunk);
  const fn = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [h, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    // Flat index i·V + y_i of each row's target logit, for the whole batch at once.
    const picks = tf.add(
      tf.mul(tf.range(0, n, 1, 'int32'), tf.scalar(vocab, 'int32')),
      targets,
    ) as tf.Tensor1D;
    if (parts.length === 1) {
      const [value, probs] = logprobsAndSoftmax(tf.matMul(h, headT), picks);
      // Saved tensors are kept until the backward pass; a tensor only captured by the closure would
      // already be disposed by then if the caller built it inside a tidy.
      save([probs, targets]);
      return {
        value,
        gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => {
          const [savedProbs, savedTargets] = saved as [tf.Tensor2D, tf.Tensor1D];
          return hiddenGrad(savedProbs, head, savedTargets, dy);
        },
      };
    }
    save([h, targets]);
    const values = parts.map(([begin, size]) =>
      tf.tidy(() => {
        const logits = tf.matMul(tf.slice(h, [begin, 0], [size, -1]), headT) as tf.Tensor2D; // [n, V]
        const rowPicks = tf.sub(
          tf.slice(picks, [begin], [size]),
          tf.scalar(begin * vocab, 'int32'),
        ) as tf.Tensor1D;
        return logprobsAndSoftmax(logits, rowPicks)[0];
      }),
    );
    return {
      value: tf.concat(values) as tf.Tensor1D, // [N]
      gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => {
        const [savedHidden, savedTargets] = saved as [tf.Tensor2D, tf.Tensor1D];
        const grads = parts.map(([begin, size]) =>
          tf.tidy(() => {
            const hChunk = tf.slice(savedHidden, [begin, 0], [size, -1]); // [n, D]
            const probs = tf.softmax(tf.matMul(hChunk, headT)) as tf.Tensor2D; // [n, V]
            const rowTargets = tf.slice(savedTargets, [begin], [size]) as tf.Tensor1D;
            return hiddenGrad(probs, head, rowTargets, tf.slice(dy, [begin], [size]) as tf.Tensor1D);
          }),
        );
        return tf.concat(grads);
      },
    };
  });
  return fn(hidden) as tf.Tensor1D;
}
