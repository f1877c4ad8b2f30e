// AdamW over an explicit list of tf.Variables, with state that can be saved and restored (resume
// without losing the moments, which ART does not save by default: OpenPipe/ART #72). tfjs's
// tf.train.adam has no decoupled weight decay, hence this file. Learning-rate schedules are the caller's.
// The update runs once over all variables laid end to end (one flat m and v), not per variable: an
// adapter has 2 tensors per adapted projection per layer, and a dozen small kernels for each of them
// was 15 % of a tiny model's step in kernel dispatch alone (`npm run bench:train -- --profile`).
//
// Update (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", arXiv:1711.05101, Alg. 2;
// same order as torch.optim.AdamW: decay first, then the Adam step), at step t = 1, 2, …:
//   θ ← θ·(1 − lr·λ)
//   m ← β1·m + (1 − β1)·g          v ← β2·v + (1 − β2)·g²
//   θ ← θ − lr·(m / (1 − β1^t)) / (√(v / (1 − β2^t)) + ε)
import * as tf from '@tensorflow/tfjs';

export interface AdamWOptions {
  readonly learningRate: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
}

/** Plain arrays: what a checkpoint stores. Moments are in the order of the optimiser's variables. */
export interface AdamWState {
  /** Steps taken so far (t of the last update). */
  readonly step: number;
  readonly moments: readonly {
    readonly name: string;
    readonly shape: readonly number[];
    readonly m: Float32Array;
    readonly v: Float32Array;
  }[];
}

export class AdamW {
  readonly variables: readonly tf.Variable[];
  readonly options: AdamWOptions;
  #step = 0;
  /** Every variable's moments end to end, in the variables' order: [Σ sizes]. */
  readonly #m: tf.Variable;
  readonly #v: tf.Variable;
  readonly #sizes: number[];

  constructor(variables: readonly tf.Variable[], options: AdamWOptions) {
    checkOptions(options);
    if (variables.length === 0) throw new RangeError('AdamW: no variables to optimise');
    this.variables = [...variables];
    this.options = options;
    this.#sizes = this.variables.map((variable) => variable.size);
    const total = this.#sizes.reduce((sum, size) => sum + size, 0);
    // Inside tidy so the zero tensors the variables start from are freed (the variables keep the data).
    this.#m = tf.tidy(() => tf.variable(tf.zeros([total]), false));
    this.#v = tf.tidy(() => tf.variable(tf.zeros([total]), false));
  }

  get step(): number {
    return this.#step;
  }

  /** One update from `grads` (same order and shapes as the variables); `learningRate` overrides the
   *  configured one for this step (schedules). The gradients are not disposed. */
  applyGradients(grads: readonly tf.Tensor[], learningRate = this.options.learningRate): void {
    if (grads.length !== this.variables.length) {
      throw new RangeError(`AdamW: ${grads.length} gradients for ${this.variables.length} variables`);
    }
    if (!(learningRate >= 0)) throw new RangeError(`AdamW: learning rate must be >= 0, got ${learningRate}`);
    grads.forEach((grad, index) => {
      const variable = this.variables[index] as tf.Variable;
      if (!tf.util.arraysEqual(grad.shape, variable.shape)) {
        throw new RangeError(
          `AdamW: gradient ${index} [${grad.shape}] does not match ${variable.name} [${variable.shape}]`,
        );
      }
    });
    const { beta1, beta2, eps, weightDecay } = this.options;
    const t = this.#step + 1;
    const correction1 = 1 - beta1 ** t;
    const correction2 = 1 - beta2 ** t;
    tf.tidy(() => {
      const flat = (tensors: readonly tf.Tensor[]) =>
        tensors.length === 1
          ? tf.reshape(tensors[0] as tf.Tensor, [-1])
          : tf.concat(tensors.map((tensor) => tf.reshape(tensor, [-1])));
      const g = flat(grads); // [Σ sizes]
      const m = tf.add(tf.mul(this.#m, beta1), tf.mul(g, 1 - beta1));
      const v = tf.add(tf.mul(this.#v, beta2), tf.mul(tf.square(g), 1 - beta2));
      this.#m.assign(m);
      this.#v.assign(v);
      const denominator = tf.add(tf.sqrt(tf.div(v, correction2)), eps);
      const update = tf.div(tf.div(m, correction1), denominator);
      const decayed = tf.mul(flat(this.variables), 1 - learningRate * weightDecay);
      const next = tf.sub(decayed, tf.mul(update, learningRate));
      const parts = this.variables.length === 1 ? [next] : tf.split(next, this.#sizes);
      parts.forEach((part, index) => {
        const variable = this.variables[index] as tf.Variable;
        variable.assign(tf.reshape(part, variable.shape));
      });
    });
    this.#step = t;
  }

  /** Copies the moments out (async: the WebGPU backend has no sync reads). */
  async getState(): Promise<AdamWState> {
    const [m, v] = (await Promise.all([this.#m.data(), this.#v.data()])) as [Float32Array, Float32Array];
    let offset = 0;
    const moments = this.variables.map((variable, index) => {
      const size = this.#sizes[index] as number;
      const moment = {
        name: variable.name,
        shape: [...variable.shape],
        m: m.slice(offset, offset + size),
        v: v.slice(offset, offset + size),
      };
      offset += size;
      return moment;
    });
    return { step: this.#step, moments };
  }

  /** Restores moments saved by `getState`, matched by position and checked by shape. */
  setState(state: AdamWState): void {
    if (!Number.isInteger(state.step) || state.step < 0) {
      throw new RangeError(`AdamW state: step must be an integer >= 0, got ${state.step}`);
    }
    if (state.moments.length !== this.variables.length) {
      throw new RangeError(
        `AdamW state has ${state.moments.length} moments for ${this.variables.length} variables`,
      );
    }
    state.moments.forEach((moment, index) => {
      const variable = this.variables[index] as tf.Variable;
      const size = variable.size;
      if (
        !tf.util.arraysEqual([...moment.shape], variable.shape) ||
        moment.m.length !== size ||
        moment.v.length !== size
      ) {
        throw new RangeError(
          `AdamW state moment ${index} (${moment.name}) has shape [${moment.shape}], ` +
            `but variable ${variable.name} is [${variable.shape}]`,
        );
      }
    });
    const total = this.#sizes.reduce((sum, size) => sum + size, 0);
    const m = new Float32Array(total);
    const v = new Float32Array(total);
    let offset = 0;
    state.moments.forEach((moment) => {
      m.set(moment.m, offset);
      v.set(moment.v, offset);
      offset += moment.m.length;
    });
    tf.tidy(() => {
      this.#m.assign(tf.tensor1d(m));
      this.#v.assign(tf.tensor1d(v));
    });
    this.#step = state.step;
  }

  /** Frees the moment variables (not the optimised variables). */
  dispose(): void {
    tf.dispose([this.#m, this.#v]);
  }
}

function checkOptions(options: AdamWOptions): void {
  const problems: string[] = [];
  if (!(options.learningRate >= 0)) problems.push(`learningRate must be >= 0, got ${options.learningRate}`);
  if (!(options.beta1 >= 0 && options.beta1 < 1))
    problems.push(`beta1 must be in [0, 1), got ${options.beta1}`);
  if (!(options.beta2 >= 0 && options.beta2 < 1))
    problems.push(`beta2 must be in [0, 1), got ${options.beta2}`);
  if (!(options.eps > 0)) problems.push(`eps must be > 0, got ${options.eps}`);
  if (!(options.weightDecay >= 0)) problems.push(`weightDecay must be >= 0, got ${options.weightDecay}`);
  if (problems.length > 0) throw new RangeError(`AdamW: ${problems.join('; ')}`);
}
