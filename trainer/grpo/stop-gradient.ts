// Stop-gradient for tfjs: the same values, no gradient flowing back. tfjs 4.22 has no
// `tf.stopGradient`, so this is a `tf.customGrad` whose gradient is zero. It never reads the tensor
// back to the CPU (the WebGPU backend forbids synchronous reads).
import * as tf from '@tensorflow/tfjs';

// customGrad passes its inputs (then a save function) as one rest list; the first is our tensor.
const detach = tf.customGrad((...inputs) => ({
  value: (inputs[0] as tf.Tensor).clone(),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
}));

/** `x` with the gradient cut: what PyTorch writes `x.detach()`. */
export function stopGradient<T extends tf.Tensor>(x: T): T {
  return detach(x) as T;
}
