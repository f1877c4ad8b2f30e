// A BatchMatMul gradient that transposes explicitly instead of passing transposeA/transposeB to
// matMul: on the wasm backend a transposed matMul is 14–67× slower than a plain one plus a separate
// transpose (research notes, feasibility §10.3). Same maths as tfjs-core's BatchMatMul_grad:
// for C = op(A)·op(B), dA and dB are products of dC with (transposed) A and B.
import * as tf from '@tensorflow/tfjs';

let registered = false;

/** Swaps the last two axes: [..., m, n] → [..., n, m]. */
function t(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, axis) => axis);
  const last = perm.length - 1;
  perm[last] = last - 1;
  perm[last - 1] = last;
  return tf.transpose(x, perm);
}

/** Registers the override once per process (tfjs prints a one-line warning when it does). */
export function registerTransposeFreeMatMulGradient(): void {
  if (registered) return;
  registered = true;
  tf.registerGradient({
    kernelName: 'BatchMatMul',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, saved, attrs) => {
      const [a, b] = saved as [tf.Tensor, tf.Tensor];
      const { transposeA, transposeB } = attrs as { transposeA: boolean; transposeB: boolean };
      const g = dy as tf.Tensor;
      // C = A·B:       dA = dC·Bᵀ,     dB = Aᵀ·dC
      // C = A·Bᵀ:      dA = dC·B,      dB = dCᵀ·A
      // C = Aᵀ·B:      dA = B·dCᵀ,     dB = A·dC
      // C = Aᵀ·Bᵀ:     dA = Bᵀ·dCᵀ,    dB = dCᵀ·Aᵀ
      if (!transposeA && !transposeB) return { a: () => tf.matMul(g, t(b)), b: () => tf.matMul(t(a), g) };
      if (!transposeA && transposeB) return { a: () => tf.matMul(g, b), b: () => tf.matMul(t(g), a) };
      if (transposeA && !transposeB) return { a: () => tf.matMul(b, t(g)), b: () => tf.matMul(a, g) };
      return { a: () => tf.matMul(t(b), t(g)), b: () => tf.matMul(t(g), t(a)) };
    },
  });
}
