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
// `rows` restricts all of it to the rows a loss reads (a trainer's assistant tokens): the others are
// 0 and get no gradient, and no logits are computed for them.
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

export interface HeadLogprobOptions {
  /** Rows per chunk of logits (default: about 8 Mi floats of logits per chunk). */
  readonly rowsPerChunk?: number;
  /** Increasing row indices to compute; the others come back 0. Default: every row. */
  readonly rows?: Int32Array;
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
  options: HeadLogprobOptions = {},
): tf.Tensor1D {
  const [n, d] = hidden.shape;
  const vocab = head.shape[0];
  if (targets.shape[0] !== n) throw new RangeError(`headLogprobs: ${n} rows but ${targets.shape[0]} targets`);
  const rows = options.rows;
  if (rows?.some((row, i) => !(row >= 0 && row < n) || (i > 0 && row <= (rows[i - 1] as number)))) {
    throw new RangeError(`headLogprobs: rows must be increasing indices in [0, ${n})`);
  }
  const m = rows ? rows.length : n; // rows computed
  const parts = chunks(m, options.rowsPerChunk ?? chunkRows(vocab));
  // Selection: gather the chosen rows in, scatter results back by a gather from [results; 0] with
  // every unchosen row pointing at the 0 (forward-only gathers: customGrad gives the gradient).
  const select = <T extends tf.Tensor>(x: T): T =>
    rows ? (tf.gather(x, tf.tensor1d(rows, 'int32')) as T) : x;
  const scatter = (x: tf.Tensor): tf.Tensor => {
    if (!rows) return x;
    const back = new Int32Array(n).fill(m);
    rows.forEach((row, i) => {
      back[row] = i;
    });
    const zero = tf.zeros([1, ...x.shape.slice(1)]);
    return tf.gather(tf.concat([x, zero]), tf.tensor1d(back, 'int32'));
  };
  const fn = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [h, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    if (m === 0) {
      return { value: tf.zeros([n]) as tf.Tensor1D, gradFunc: () => tf.zeros([n, d]) };
    }
    const chosen = select(h); // [M, D]
    const chosenTargets = select(targets); // [M]
    // Flat index i·V + y_i of each row's target logit, for all chosen rows at once.
    const picks = tf.add(
      tf.mul(tf.range(0, m, 1, 'int32'), tf.scalar(vocab, 'int32')),
      chosenTargets,
    ) as tf.Tensor1D;
    if (parts.length === 1) {
      const [value, probs] = logprobsAndSoftmax(tf.matMul(chosen, headT), picks);
      // Saved tensors are kept until the backward pass; a tensor only captured by the closure would
      // already be disposed by then if the caller built it inside a tidy.
      save([probs, chosenTargets]);
      return {
        value: scatter(value) as tf.Tensor1D,
        gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => {
          const [savedProbs, savedTargets] = saved as [tf.Tensor2D, tf.Tensor1D];
          return scatter(hiddenGrad(savedProbs, head, savedTargets, select(dy)));
        },
      };
    }
    save([chosen, chosenTargets]);
    const values = parts.map(([begin, size]) =>
      tf.tidy(() => {
        const logits = tf.matMul(tf.slice(chosen, [begin, 0], [size, -1]), headT) as tf.Tensor2D; // [n, V]
        const rowPicks = tf.sub(
          tf.slice(picks, [begin], [size]),
          tf.scalar(begin * vocab, 'int32'),
        ) as tf.Tensor1D;
        return logprobsAndSoftmax(logits, rowPicks)[0];
      }),
    );
    return {
      value: scatter(tf.concat(values)) as tf.Tensor1D, // [N]
      gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => {
        const [savedChosen, savedTargets] = saved as [tf.Tensor2D, tf.Tensor1D];
        const chosenDy = select(dy);
        const grads = parts.map(([begin, size]) =>
          tf.tidy(() => {
            const hChunk = tf.slice(savedChosen, [begin, 0], [size, -1]); // [n, D]
            const probs = tf.softmax(tf.matMul(hChunk, headT)) as tf.Tensor2D; // [n, V]
            const rowTargets = tf.slice(savedTargets, [begin], [size]) as tf.Tensor1D;
            return hiddenGrad(probs, head, rowTargets, tf.slice(chosenDy, [begin], [size]) as tf.Tensor1D);
          }),
        );
        return scatter(tf.concat(grads));
      },
    };
  });
  return fn(hidden) as tf.Tensor1D;
}
