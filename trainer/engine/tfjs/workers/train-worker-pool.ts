// Data-parallel gradients on worker threads: `size` workers, each with its own TensorFlow.js backend
// and copies of the base model and adapter (gradient-worker.ts). Per step the coordinator (this
// thread) splits the sequences between them by tokens (shard-sequences.ts), writes the adapter's
// current values into one shared buffer, and each worker computes its share's gradients (divided by
// the whole step's normaliser, so the shares add up to the step's gradient) into its own slot. The
// slots are summed here in worker order (deterministic) and handed to trainStep, which clips and
// applies AdamW to this thread's adapter: the only copy that is updated, so every worker starts each
// step from the same adapter. A worker that exits or fails rejects the step with a TrainWorkerError
// (nothing is applied, so nothing can be published from it); the pool stops its other workers and
// starts fresh ones at the next step. Workers start at the first step (a session that never trains
// starts none). Node only.
import * as tf from '@tensorflow/tfjs';
import type { BackendChoice } from '../../../../model/backend-names.ts';
import { loraVariables } from '../../../../model/lora.ts';
import type { PolicyModel } from '../../../../model/policy-model.ts';
import { WorkerThread } from '../../../../model/worker-thread/worker-thread.ts';
import type { StepNormaliser } from '../../../grpo/aggregate.ts';
import type { LossSums } from '../../../grpo/grpo-loss.ts';
import { planMicroBatches } from '../../../grpo/micro-batches.ts';
import type { TrainingSequence } from '../../training-sequence.ts';
import type { MicroBatchProgress } from '../../train-engine.ts';
import type { GradientOptions, GradientWorkers, SequenceGradients } from '../train-step.ts';
import { shardSequences } from './shard-sequences.ts';
import type {
  AdapterLayout,
  Done,
  FromWorker,
  ModelSource,
  StepRequest,
  WorkerStart,
} from './worker-protocol.ts';

export type TrainWorkerErrorCode = 'train-worker-died' | 'train-worker-failed';

/** A worker stopped (exit, crash, terminate) or reported an error: the step was not applied. */
export class TrainWorkerError extends Error {
  override readonly name = 'TrainWorkerError';
  constructor(
    readonly code: TrainWorkerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface TrainWorkerPoolOptions {
  /** Worker threads; at least 1. */
  readonly size: number;
  /** The backend each worker activates: the coordinator's. */
  readonly backend: BackendChoice;
  readonly model: ModelSource;
}

const entry = new URL('./gradient-worker.ts', import.meta.url).href;

type WorkerHandle = WorkerThread<StepRequest, Done, FromWorker>;

let nextStepId = 1;

export class TrainWorkerPool implements GradientWorkers {
  readonly size: number;
  readonly #options: TrainWorkerPoolOptions;
  readonly #workers: (WorkerHandle | undefined)[];
  #layout: { adapter: unknown; layout: AdapterLayout } | undefined;
  #weights: Float32Array | undefined;
  #grads: Float32Array | undefined;
  #closed = false;
  /** The running step's id and progress callback: micro-batch events of other ids are stale. */
  #progress: { readonly id: number; readonly report: (tokens: number) => void } | undefined;

  constructor(options: TrainWorkerPoolOptions) {
    if (!(Number.isInteger(options.size) && options.size >= 1)) {
      throw new RangeError(`a training worker pool needs an integer size >= 1, got ${options.size}`);
    }
    this.size = options.size;
    this.#options = options;
    this.#workers = new Array(options.size).fill(undefined);
  }

  async gradients(
    model: PolicyModel,
    adapterName: string,
    sequences: readonly TrainingSequence[],
    normaliser: StepNormaliser,
    options: GradientOptions,
    onMicroBatch?: MicroBatchProgress,
  ): Promise<SequenceGradients & { readonly workerSeconds: readonly number[] }> {
    if (this.#closed) throw new Error('the training worker pool is closed');
    if (sequences.length === 0) throw new RangeError('gradients: no sequences');
    const trainable = model.trainableVariables(adapterName);
    const layout = this.#layoutOf(model, adapterName);
    const trainableSize = trainable.reduce((sum, variable) => sum + variable.size, 0);
    const weights = this.#weightsBuffer(layout);
    const grads = this.#gradsBuffer(trainableSize);
    let offset = 0;
    for (const variable of loraVariables(model.adapter(adapterName))) {
      weights.set((await variable.data()) as Float32Array, offset);
      offset += variable.size;
    }

    const lengths = sequences.map((sequence) => sequence.ids.length);
    const shards = shardSequences(lengths, this.size).filter((shard) => shard.length > 0);
    const totalMicroBatches = shards.reduce(
      (sum, shard) =>
        sum +
        planMicroBatches(
          shard.map((index) => lengths[index] as number),
          options.microBatchTokens,
        ).batches.length,
      0,
    );
    const id = nextStepId++;
    let done = 0;
    let tokens = 0;
    const progress = (more: number) => {
      done += 1;
      tokens += more;
      onMicroBatch?.(done, totalMicroBatches, tokens);
    };
    // Only the data: the caller's options may carry callbacks, which cannot cross to a thread.
    const plain: GradientOptions = {
      objective: options.objective,
      microBatchTokens: options.microBatchTokens,
      padTokenId: options.padTokenId,
    };
    let replies: Done[];
    this.#progress = { id, report: progress };
    try {
      replies = await Promise.all(
        shards.map(async (shard, worker) => {
          const handle = await this.#worker(worker);
          return handle.request({
            kind: 'step',
            id,
            adapterName,
            adapter: layout,
            weights,
            grads: grads.subarray(worker * trainableSize, (worker + 1) * trainableSize),
            sequences: shard.map((index) => sequences[index] as TrainingSequence),
            normaliser,
            options: plain,
          });
        }),
      );
    } catch (error) {
      // The others may still be computing this step: stop them, so the next step starts clean.
      await this.#stopAll();
      throw error;
    } finally {
      this.#progress = undefined;
    }

    // Summed in worker order: the same shares give the same bits.
    const sum = grads.slice(0, trainableSize);
    for (let worker = 1; worker < replies.length; worker++) {
      const slot = grads.subarray(worker * trainableSize, (worker + 1) * trainableSize);
      for (let i = 0; i < trainableSize; i++) sum[i] = (sum[i] as number) + (slot[i] as number);
    }
    let at = 0;
    const tensors = trainable.map((variable) => {
      const tensor = tf.tensor(sum.subarray(at, at + variable.size), variable.shape);
      at += variable.size;
      return tensor;
    });
    return {
      grads: tensors,
      microBatches: replies.flatMap((reply): LossSums[] => reply.microBatches),
      tokens: replies.reduce((total, reply) => total + reply.tokens, 0),
      paddedTokens: replies.reduce((total, reply) => total + reply.paddedTokens, 0),
      workerSeconds: replies.map((reply) => reply.seconds),
    };
  }

  /** Stops worker `index` at once, as a crash would; its step (if any) fails. For fault tests. */
  async kill(index: number): Promise<void> {
    await this.#workers[index]?.terminate();
  }

  /** Workers currently running (started and not gone). */
  get running(): number {
    return this.#workers.filter((worker) => worker?.alive).length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stopAll();
  }

  /** The worker at `index`, started (again, if the last one went away). */
  async #worker(index: number): Promise<WorkerHandle> {
    let handle = this.#workers[index];
    if (!handle?.alive) {
      const data: WorkerStart = { index, backend: this.#options.backend, model: this.#options.model };
      handle = new WorkerThread<StepRequest, Done, FromWorker>({
        entry,
        data,
        label: `training worker ${index}`,
        error: (kind, message) =>
          new TrainWorkerError(kind === 'died' ? 'train-worker-died' : 'train-worker-failed', message),
        onEvent: (event) => {
          if (event.id === this.#progress?.id) this.#progress.report(event.tokens);
        },
      });
      this.#workers[index] = handle;
    }
    await handle.ready;
    return handle;
  }

  async #stopAll(): Promise<void> {
    const handles = this.#workers.splice(0, this.#workers.length, ...new Array(this.size).fill(undefined));
    await Promise.all(handles.map((handle) => handle?.terminate()));
  }

  /** The adapter's layout; a new key whenever the adapter object or its shape changes. */
  #layoutOf(model: PolicyModel, adapterName: string): AdapterLayout {
    const adapter = model.adapter(adapterName);
    const variables = loraVariables(adapter);
    const shapes = variables.map((variable) => [...variable.shape]);
    const trainable = variables.map((variable) => variable.trainable);
    const cached = this.#layout;
    if (
      cached?.adapter === adapter &&
      JSON.stringify([shapes, trainable]) === JSON.stringify([cached.layout.shapes, cached.layout.trainable])
    ) {
      return cached.layout;
    }
    const layout: AdapterLayout = {
      key: `${nextStepId}:${JSON.stringify([adapter.config, shapes, trainable])}`,
      config: adapter.config,
      shapes,
      trainable,
    };
    this.#layout = { adapter, layout };
    return layout;
  }

  #weightsBuffer(layout: AdapterLayout): Float32Array {
    const size = layout.shapes.reduce((sum, shape) => sum + shape.reduce((a, b) => a * b, 1), 0);
    if (this.#weights?.length !== size) this.#weights = sharedFloats(size);
    return this.#weights;
  }

  #gradsBuffer(trainableSize: number): Float32Array {
    if (this.#grads?.length !== trainableSize * this.size) {
      this.#grads = sharedFloats(trainableSize * this.size);
    }
    return this.#grads;
  }
}

function sharedFloats(count: number): Float32Array {
  return new Float32Array(
    new SharedArrayBuffer(Math.max(1, count) * Float32Array.BYTES_PER_ELEMENT),
  ).subarray(0, count);
}
