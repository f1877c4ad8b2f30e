// The embedded engine: TensorFlow.js in this process (model/policy-model.ts), one adapter named
// `train`, AdamW over its trainable matrices (trainer/grpo/adamw.ts), steps by train-step.ts, and
// data-parallel gradient threads (workers/) on the single-threaded CPU backends. No set-up beyond npm;
// models of a few million parameters (the wasm heap stops near 4 GB). Leaves out backend selection
// (model/backend.ts, before opening).
//
// Legend: B sequences in a batch, T positions, V vocabulary, K queried positions.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { selectedBackend } from '../../../model/backend.ts';
import { setLoraATrainable } from '../../../model/lora.ts';
import { loadModel, type PolicyModel } from '../../../model/policy-model.ts';
import { parameterCount } from '../../../model/init-model.ts';
import { AdamW, type AdamWState } from '../../grpo/adamw.ts';
import {
  encodeOptimizerMoments,
  type Moment,
  optimizerFile,
  peftKeyOfVariable,
  readOptimizerMoments,
  transpose,
} from '../optimizer-state-file.ts';
import type {
  AdapterShape,
  AdapterStart,
  EngineModel,
  EngineStep,
  EngineStepResult,
  MicroBatchProgress,
  OptimizerSettings,
  Prediction,
  PredictQuery,
  TrainEngine,
} from '../train-engine.ts';
import { trainStep } from './train-step.ts';
import { TrainWorkerPool } from './workers/train-worker-pool.ts';
import { resolveWorkerCount } from './workers/worker-count.ts';

export interface TfjsEngineOptions {
  /** Gradient worker threads; null: the backend's default (workers/worker-count.ts). */
  readonly workers: number | null;
  readonly log: (line: string) => void;
}

export class TfjsEngine implements TrainEngine {
  readonly kind = 'tfjs';
  /** The adapter's name inside the runtime (not the served name). */
  readonly adapterName = 'train';
  readonly model: EngineModel;
  readonly runtime: PolicyModel;
  /** Data-parallel gradient threads; undefined when the steps run in this thread. */
  readonly workers: TrainWorkerPool | undefined;
  #optimizer: AdamW | undefined;
  #closed = false;

  private constructor(runtime: PolicyModel, workers: TrainWorkerPool | undefined) {
    this.runtime = runtime;
    this.workers = workers;
    this.model = {
      vocabSize: runtime.config.vocabSize,
      maxPositionEmbeddings: runtime.config.maxPositionEmbeddings,
      parameters: parameterCount(runtime.config),
    };
  }

  static async open(modelDir: string, options: TfjsEngineOptions): Promise<TfjsEngine> {
    const runtime = await loadModel(modelDir);
    try {
      return new TfjsEngine(runtime, gradientWorkers(modelDir, options));
    } catch (error) {
      runtime.dispose();
      throw error;
    }
  }

  /** The optimiser; throws before resetOptimizer. */
  get optimizer(): AdamW {
    if (!this.#optimizer)
      throw new Error('the tfjs engine has no optimiser yet: reset it after starting an adapter');
    return this.#optimizer;
  }

  get optimizerSteps(): number {
    return this.optimizer.step;
  }

  async startAdapter(start: AdapterStart): Promise<AdapterShape> {
    this.#optimizer?.dispose();
    this.#optimizer = undefined;
    if (this.runtime.adapterNames().includes(this.adapterName)) this.runtime.removeAdapter(this.adapterName);
    const adapter =
      start.kind === 'fresh'
        ? this.runtime.addAdapter(this.adapterName, start.settings, { seed: start.seed })
        : await this.runtime.loadAdapter(this.adapterName, start.dir);
    const { r, alpha, targets } = adapter.config;
    return { r, alpha, targets };
  }

  async resetOptimizer(settings: OptimizerSettings): Promise<void> {
    this.#optimizer?.dispose();
    this.#optimizer = undefined;
    // A loaded adapter's A is trainable as loaded; the configured LoRA-FA choice applies to every start.
    setLoraATrainable(this.runtime.adapter(this.adapterName), settings.trainA);
    this.#optimizer = new AdamW(this.runtime.trainableVariables(this.adapterName), {
      learningRate: settings.learningRate,
      beta1: settings.beta1,
      beta2: settings.beta2,
      eps: settings.eps,
      weightDecay: settings.weightDecay,
    });
  }

  async loadOptimizer(dir: string): Promise<void> {
    const optimizer = this.optimizer;
    const saved = await readOptimizerMoments(dir);
    const moments = optimizer.variables.map((variable) => {
      const key = peftKeyOfVariable(variable.name);
      const moment = key ? saved.moments.get(key) : undefined;
      if (!key || !moment) {
        throw new Error(`${join(dir, optimizerFile)}: no moments for ${key ?? variable.name}`);
      }
      // The runtime holds Aᵀ [in, r] and Bᵀ [r, out]; the file PEFT's A [r, in] and B [out, r].
      const [rows, columns] = variable.shape as [number, number];
      if (moment.shape[0] !== columns || moment.shape[1] !== rows) {
        throw new Error(
          `${join(dir, optimizerFile)}: ${key} has moments [${moment.shape}], the adapter's matrix is [${columns}, ${rows}]`,
        );
      }
      return {
        name: variable.name,
        shape: [...variable.shape],
        m: transpose(moment.m, columns, rows),
        v: transpose(moment.v, columns, rows),
      };
    });
    const state: AdamWState = { step: saved.step, moments };
    optimizer.setState(state);
  }

  step(step: EngineStep, onMicroBatch?: MicroBatchProgress): Promise<EngineStepResult> {
    return trainStep(this.runtime, this.adapterName, this.optimizer, step.sequences, {
      objective: step.objective,
      microBatchTokens: step.microBatchTokens,
      maxGradNorm: step.maxGradNorm,
      learningRate: step.learningRate,
      padTokenId: step.padTokenId,
      workers: this.workers,
      ...(step.replay ? { replay: step.replay } : {}),
      ...(onMicroBatch ? { onMicroBatch } : {}),
    });
  }

  async save(dir: string, options: { readonly optimizer: boolean }): Promise<void> {
    await mkdir(dir, { recursive: true });
    await this.runtime.saveAdapter(this.adapterName, dir);
    if (!options.optimizer) return;
    const state = await this.optimizer.getState();
    const moments = new Map<string, Moment>();
    for (const moment of state.moments) {
      const key = peftKeyOfVariable(moment.name);
      if (!key) throw new Error(`optimiser variable ${moment.name} is not a LoRA matrix`);
      const [rows, columns] = moment.shape as [number, number]; // Aᵀ or Bᵀ: PEFT's A and B transposed
      moments.set(key, {
        shape: [columns, rows],
        m: transpose(moment.m, rows, columns),
        v: transpose(moment.v, rows, columns),
      });
    }
    await writeFile(join(dir, optimizerFile), encodeOptimizerMoments({ step: state.step, moments }));
  }

  logprobs(
    sequences: readonly (readonly number[])[],
    options: { readonly adapter: boolean },
  ): Promise<number[][]> {
    return this.runtime.logprobs(sequences, { adapter: options.adapter ? this.adapterName : null });
  }

  async predict(
    sequences: readonly (readonly number[])[],
    query: PredictQuery,
    options: { readonly adapter: boolean; readonly padTokenId: number },
  ): Promise<Prediction> {
    const count = query.rows.length;
    if (query.positions.length !== count || (query.tokens && query.tokens.length !== count)) {
      throw new RangeError('predict: rows, positions and tokens must be equally long');
    }
    const argmax = new Array<number>(count).fill(0);
    const logprobs = query.tokens ? new Array<number>(count).fill(0) : undefined;
    const batchSize = 16;
    for (let start = 0; start < sequences.length; start += batchSize) {
      const chunk = sequences.slice(start, start + batchSize);
      const asked = query.rows.flatMap((row, k) => (row >= start && row < start + chunk.length ? [k] : []));
      if (asked.length === 0) continue;
      const t = Math.max(...chunk.map((sequence) => sequence.length));
      const ids = chunk.map((sequence) => [
        ...sequence,
        ...new Array<number>(t - sequence.length).fill(options.padTokenId),
      ]);
      const attentionMask = chunk.map((sequence) =>
        Array.from({ length: t }, (_, at) => (at < sequence.length ? 1 : 0)),
      );
      const [best, chosen] = tf.tidy(() => {
        const logits = this.runtime.forwardLogits(ids, {
          adapter: options.adapter ? this.adapterName : null,
          attentionMask,
        }); // [B, T, V]
        const at = tf.gatherND(
          logits,
          asked.map((k) => [(query.rows[k] as number) - start, query.positions[k] as number]),
        ) as tf.Tensor2D; // [K, V]
        const top = tf.argMax(at, 1); // [K]
        if (!query.tokens) return [top, undefined];
        const tokens = query.tokens;
        const picked = tf.gatherND(
          tf.logSoftmax(at),
          asked.map((k, row) => [row, tokens[k] as number]),
        ); // [K]
        return [top, picked];
      });
      const bestValues = await best.data();
      const chosenValues = chosen ? await chosen.data() : undefined;
      tf.dispose([best, ...(chosen ? [chosen] : [])]);
      asked.forEach((k, index) => {
        argmax[k] = bestValues[index] as number;
        if (logprobs && chosenValues) logprobs[k] = chosenValues[index] as number;
      });
    }
    return { argmax, ...(logprobs ? { logprobs } : {}) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.workers?.close();
    this.#optimizer?.dispose();
    this.runtime.dispose();
  }
}

/** The worker pool `workers` (or the backend's default) asks for; none for one worker. */
function gradientWorkers(modelDir: string, options: TfjsEngineOptions): TrainWorkerPool | undefined {
  const backend = selectedBackend()?.choice;
  const size = resolveWorkerCount(options.workers, backend);
  if (size === 1) return undefined;
  if (!backend) {
    throw new Error(`--workers ${size} needs the backend chosen first (selectBackend, model/backend.ts)`);
  }
  options.log(`gradients on ${size} worker threads (${backend})`);
  return new TrainWorkerPool({ size, backend, model: { kind: 'dir', dir: modelDir } });
}
