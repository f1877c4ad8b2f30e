// tf.tidy for results typed as interfaces (tf.tidy's TensorContainer type wants index signatures).
// tidy walks any returned object or array for tensors to keep, so the cast changes nothing at run time.
import * as tf from '@tensorflow/tfjs';

export function tidy<T>(fn: () => T): T {
  return tf.tidy(fn as unknown as () => tf.TensorContainer) as unknown as T;
}
