// log p(target | hidden) through the output projection, without keeping [N, V] logits alive for the
// backward pass: forward and backward both walk the rows in chunks, and the gradient is recomputed
// from the saved hidden states, d log p_y / dh = W[y] − Σ_v softmax(h·Wᵀ)_v · W[v].
// Only `hidden` receives a gradient (the head is frozen). Legend: N rows, D hidden, V vocab, n chunk.
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
    // Saved tensors are kept until the backward pass; a tensor only captured by the closure would
    // already be disposed by then if the caller built it inside a tidy.
    save([h, targets]);
    const values = parts.map(([begin, size]) =>
      tf.tidy(() => {
        const logits = tf.matMul(tf.slice(h, [begin, 0], [size, -1]), headT); // [n, V]
        const lse = tf.logSumExp(logits, -1); // [n]
        // Pick logits[i, y_i] through the flattened index i·V + y_i.
        const rowOffsets = tf.mul(tf.range(0, size, 1, 'int32'), tf.scalar(vocab, 'int32')); // [n]
        const picked = tf.gather(
          tf.reshape(logits, [-1]),
          tf.add(rowOffsets, tf.slice(targets, [begin], [size])),
        ); // [n]
        return tf.sub(picked, lse);
      }),
    );
    const value = (values.length === 1 ? values[0] : tf.concat(values)) as tf.Tensor1D; // [N]
    return {
      value,
      gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => {
        const [savedHidden, savedTargets] = saved as [tf.Tensor2D, tf.Tensor1D];
        const grads = parts.map(([begin, size]) =>
          tf.tidy(() => {
            const hChunk = tf.slice(savedHidden, [begin, 0], [size, -1]); // [n, D]
            const probs = tf.softmax(tf.matMul(hChunk, headT)); // [n, V]
            const expected = tf.matMul(probs, head); // [n, D]
            const chosen = tf.gather(head, tf.slice(savedTargets, [begin], [size])); // [n, D]
            const scale = tf.reshape(tf.slice(dy, [begin], [size]), [size, 1]); // [n, 1]
            return tf.mul(tf.sub(chosen, expected), scale);
          }),
        );
        return grads.length === 1 ? (grads[0] as tf.Tensor) : tf.concat(grads);
      },
    };
  });
  return fn(hidden) as tf.Tensor1D;
}
