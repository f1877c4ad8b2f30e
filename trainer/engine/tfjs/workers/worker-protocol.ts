// What the coordinator (train-worker-pool.ts) and a gradient worker thread (gradient-worker.ts) say to
// each other. Bulk data travels in SharedArrayBuffers, so nothing large is copied per message: the base
// weights once (when they do not come from a model directory), the adapter's values per step (one
// buffer every worker reads), and each worker's gradients (its own slot of one buffer the coordinator
// sums). Token ids and masks are small and travel in the messages.
import type { BackendChoice } from '../../../../model/backend-names.ts';
import type { ModelConfig } from '../../../../model/hf-config.ts';
import type { LoraConfig } from '../../../../model/lora.ts';
import type { HostTensor } from '../../../../model/safetensors.ts';
import type { StepNormaliser } from '../../../grpo/aggregate.ts';
import type { LossSums } from '../../../grpo/grpo-loss.ts';
import type { TrainingSequence } from '../../training-sequence.ts';
import type { GradientOptions } from '../train-step.ts';

export interface NamedHostTensor extends HostTensor {
  readonly name: string;
}

/** Where a worker gets the base model: the directory (each worker reads it), or shared host weights. */
export type ModelSource =
  | { readonly kind: 'dir'; readonly dir: string }
  | {
      readonly kind: 'host';
      readonly config: ModelConfig;
      /** `data` views one SharedArrayBuffer (shareHostWeights): no copy per worker on the JS side. */
      readonly tensors: readonly NamedHostTensor[];
    };

export interface WorkerStart {
  readonly index: number;
  readonly backend: BackendChoice;
  readonly model: ModelSource;
}

/** The adapter as the workers must rebuild it: its config, every variable's shape and trainability. */
export interface AdapterLayout {
  /** Changes whenever the adapter is another one (shape, config or a new adapter object). */
  readonly key: string;
  readonly config: LoraConfig;
  /** Per variable of loraVariables(adapter), in that order. */
  readonly shapes: readonly (readonly number[])[];
  readonly trainable: readonly boolean[];
}

export interface StepRequest {
  readonly kind: 'step';
  readonly id: number;
  readonly adapterName: string;
  readonly adapter: AdapterLayout;
  /** Every adapter variable's values, concatenated in layout order (SharedArrayBuffer). */
  readonly weights: Float32Array;
  /** This worker's slot for the gradients of the trainable variables, concatenated in order. */
  readonly grads: Float32Array;
  readonly sequences: readonly TrainingSequence[];
  readonly normaliser: StepNormaliser;
  readonly options: GradientOptions;
}

/** A step's answer (model/worker-thread/worker-thread.ts carries it, with ready and failed). */
export interface Done {
  readonly kind: 'done';
  readonly id: number;
  readonly microBatches: LossSums[];
  readonly tokens: number;
  readonly paddedTokens: number;
  /** Compute time in the worker: adapter load, forward, backward, gradient read-back. */
  readonly seconds: number;
}

/** The worker's one event: a micro-batch of step `id` is done. */
export type FromWorker = { readonly kind: 'micro-batch'; readonly id: number; readonly tokens: number };

/** Copies host weights into one SharedArrayBuffer that every worker reads in place. */
export function shareHostWeights(host: ReadonlyMap<string, HostTensor>): NamedHostTensor[] {
  let total = 0;
  for (const tensor of host.values()) total += tensor.data.length;
  const shared = new Float32Array(new SharedArrayBuffer(total * Float32Array.BYTES_PER_ELEMENT));
  const out: NamedHostTensor[] = [];
  let offset = 0;
  for (const [name, tensor] of host) {
    const view = shared.subarray(offset, offset + tensor.data.length);
    view.set(tensor.data);
    out.push({ name, shape: tensor.shape, data: view });
    offset += tensor.data.length;
  }
  return out;
}
