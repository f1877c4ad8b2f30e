// Gradients of one micro-batch's loss with respect to an explicit list of variables (the adapter's),
// and their accumulation over the micro-batches of a step. Because every micro-batch is divided by the
// step's normaliser (aggregate.ts), the accumulated sum is the full batch's gradient.
import * as tf from '@tensorflow/tfjs';
import type { LossSumTensors } from './grpo-loss.ts';

export interface MicroBatchGrads {
  /** One gradient per variable, same order; zeros for a variable the loss does not reach. */
  readonly grads: tf.Tensor[];
  /** The loss and the diagnostic sums, kept alive past the gradient tape for the caller to read. */
  readonly sums: LossSumTensors;
}

/** Runs `lossFn` under a gradient tape; only `variables` receive gradients (base weights stay frozen). */
export function microBatchGrads(
  variables: readonly tf.Variable[],
  lossFn: () => LossSumTensors,
): MicroBatchGrads {
  if (variables.length === 0) throw new RangeError('microBatchGrads: no variables to differentiate');
  const untrainable = variables.filter((variable) => !variable.trainable).map((variable) => variable.name);
  if (untrainable.length > 0) {
    throw new RangeError(`microBatchGrads: variables not trainable: ${untrainable.join(', ')}`);
  }
  let kept: Omit<LossSumTensors, 'loss'> | undefined;
  const { value, grads } = tf.variableGrads(() => {
    const { loss, ...rest } = lossFn();
    // Everything but the loss would be disposed with the tape's scope; keep it for the step record.
    for (const tensor of Object.values(rest)) if (tensor) tf.keep(tensor);
    kept = rest;
    return loss;
  }, [...variables]);
  if (kept === undefined) throw new Error('microBatchGrads: lossFn did not run');
  const ordered = variables.map((variable) => grads[variable.name] ?? tf.zerosLike(variable));
  return { grads: ordered, sums: { loss: value, ...kept } };
}

/** Adds two gradient lists element-wise and disposes both; `undefined` starts the sum. */
export function addGrads(total: readonly tf.Tensor[] | undefined, next: readonly tf.Tensor[]): tf.Tensor[] {
  if (total === undefined) return [...next];
  if (total.length !== next.length) {
    throw new RangeError(`addGrads: ${total.length} accumulated gradients but ${next.length} new ones`);
  }
  const sum = total.map((grad, index) => {
    const other = next[index] as tf.Tensor;
    if (!tf.util.arraysEqual(grad.shape, other.shape)) {
      throw new RangeError(`addGrads: gradient ${index} has shape [${grad.shape}] then [${other.shape}]`);
    }
    return tf.add(grad, other);
  });
  tf.dispose([...total, ...next]);
  return sum;
}
