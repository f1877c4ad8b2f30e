// The PyTorch engine: transformers + PEFT in a Python child process (torch-engine/), driven over the
// versioned protocol of docs/torch-engine.md. Models are whatever AutoModelForCausalLM loads, in
// bf16 on a GPU and float32 on the CPU; several processes under torch.distributed with
// --engine-processes, the model sharded over them with --engine-sharding fsdp. The cycle sees the same
// TrainEngine as tfjs's; this file maps its calls to the protocol's operations. Leaves out the frames
// (frames.ts) and the process (engine-process.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModelConfig } from '../../../model/policy-model.ts';
import { EngineError } from '../engine-error.ts';
import { writeFreshAdapter } from '../fresh-adapter.ts';
import type { EngineSettings } from '../engine-settings.ts';
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
import { checkOnPolicy } from '../train-engine.ts';
import { planMicroBatches } from '../../grpo/micro-batches.ts';
import type { Projection } from '../../../model/hf-config.ts';
import { EngineProcess, type Reply } from './engine-process.ts';
import { findTorchPython, torchEnginePackageDir } from './find-python.ts';
import { sequenceTensors, stepRequest, stepResult } from './step-request.ts';

/** The protocol version this trainer speaks (docs/torch-engine.md). */
export const torchProtocolVersion = 1;

/** Padded tokens per forward pass of `logprobs` and `predict`: scoring keeps no activations for a
 *  backward pass, so it takes several training micro-batches' worth at once. An edgerl choice. */
export const scoringMicroBatchTokens = 16_384;

/** `micro_batches` for scoring `sequences`, by the trainer's longest-first rule (grpo/micro-batches.ts). */
function scoringPlan(sequences: readonly (readonly number[])[]): number[][] {
  return planMicroBatches(
    sequences.map((sequence) => Math.max(1, sequence.length)),
    scoringMicroBatchTokens,
  ).batches;
}

export interface TorchEngineOptions {
  readonly log: (line: string) => void;
  /** Seeds the engine's generators (LoRA dropout, a fresh adapter's A). */
  readonly seed: number;
}

/** What `hello` reports of the engine's Python side. */
export interface TorchEngineInfo {
  readonly python: string;
  readonly torch: string;
  readonly transformers: string;
  readonly peft: string;
  readonly device: string;
  readonly worldSize: number;
  /** How the model lies over the ranks: whole on each (none) or sharded (fsdp). */
  readonly sharding: string;
}

/** A started engine process with its model loaded. */
interface Started {
  readonly process: EngineProcess;
  readonly info: TorchEngineInfo;
  readonly model: EngineModel;
}

/** `python -m edgerl_torch`'s flags: the ranks, and FSDP sharding only with several (the train config's
 *  checks refuse it with one). */
export function engineArgs(settings: Pick<EngineSettings, 'processes' | 'sharding'>): string[] {
  if (settings.processes <= 1) return [];
  const sharding = settings.sharding === 'fsdp' ? ['--sharding', 'fsdp'] : [];
  return ['--processes', String(settings.processes), ...sharding];
}

/** Starts the engine process, checks its protocol and requirements, and loads the base model. */
async function startEngine(
  modelDir: string,
  settings: EngineSettings,
  options: TorchEngineOptions,
): Promise<Started> {
  const python = findTorchPython(settings.python);
  const engine = EngineProcess.start({
    python,
    args: engineArgs(settings),
    packageDir: torchEnginePackageDir,
    log: options.log,
  });
  try {
    const hello = await engine.request('hello', { protocol: torchProtocolVersion });
    const info: TorchEngineInfo = {
      python: String(hello.result.python),
      torch: String(hello.result.torch),
      transformers: String(hello.result.transformers),
      peft: String(hello.result.peft),
      device: String(hello.result.device),
      worldSize: Number(hello.result.world_size),
      sharding: String(hello.result.sharding ?? 'none'),
    };
    const loaded = await engine.request('load-model', {
      model_dir: modelDir,
      device: settings.device,
      dtype: settings.dtype,
      gradient_checkpointing: settings.gradientCheckpointing,
      logprob_chunk_tokens: settings.logprobChunkTokens,
      attention: settings.attention,
      seed: options.seed,
    });
    options.log(
      `torch engine (pid ${engine.pid}): torch ${info.torch}, transformers ${info.transformers}, peft ${info.peft}, ${loaded.result.device} ${loaded.result.dtype}` +
        `${info.worldSize > 1 ? `, ${info.worldSize} processes${info.sharding === 'fsdp' ? ' (fsdp)' : ''}` : ''}; ${Number(loaded.result.parameters).toLocaleString('en-US')} parameters loaded in ${Number(loaded.result.seconds).toFixed(1)} s`,
    );
    return {
      process: engine,
      info,
      model: {
        vocabSize: Number(loaded.result.vocab_size),
        maxPositionEmbeddings: Number(loaded.result.max_position_embeddings),
        parameters: Number(loaded.result.parameters),
      },
    };
  } catch (error) {
    engine.kill();
    await engine.exited;
    throw error;
  }
}

export class TorchEngine implements TrainEngine {
  readonly kind = 'torch';
  readonly model: EngineModel;
  readonly info: TorchEngineInfo;
  #process: EngineProcess;
  /** Written into saved adapters as base_model_name_or_path, as the tfjs engine writes its source. */
  readonly #modelDir: string;
  readonly #settings: EngineSettings;
  readonly #options: TorchEngineOptions;
  #optimizerSteps = 0;
  #hasOptimizer = false;
  #closed = false;

  private constructor(
    started: Started,
    modelDir: string,
    settings: EngineSettings,
    options: TorchEngineOptions,
  ) {
    this.#process = started.process;
    this.info = started.info;
    this.model = started.model;
    this.#modelDir = modelDir;
    this.#settings = settings;
    this.#options = options;
  }

  static async open(
    modelDir: string,
    settings: EngineSettings,
    options: TorchEngineOptions,
  ): Promise<TorchEngine> {
    return new TorchEngine(await startEngine(modelDir, settings, options), modelDir, settings, options);
  }

  /** The engine process's id (tests kill it). */
  get pid(): number | undefined {
    return this.#process.pid;
  }

  get optimizerSteps(): number {
    return this.#optimizerSteps;
  }

  async startAdapter(start: AdapterStart): Promise<AdapterShape> {
    this.#hasOptimizer = false;
    if (this.#process.hasExited) {
      // A crashed or killed engine (out of memory, a signal) failed the cycle it was in; the trainer
      // then resumes from its checkpoint, which starts here: a new process, the model loaded again.
      this.#options.log(`the torch engine (pid ${this.#process.pid}) has exited; starting a new one`);
      this.#process = (await startEngine(this.#modelDir, this.#settings, this.#options)).process;
    }
    if (start.kind === 'peft') return this.#loadAdapter(start.dir);
    // edgerl's own initialisation when its runtime knows the architecture: the seed's adapter is then
    // the tfjs engine's too (fresh-adapter.ts); otherwise PEFT's, drawn from the engine's generator.
    const config = await loadModelConfig(this.#modelDir).catch(() => undefined);
    if (config) {
      const dir = await mkdtemp(join(tmpdir(), 'edgerl-fresh-adapter-'));
      try {
        await writeFreshAdapter(dir, config, start.settings, {
          seed: start.seed,
          baseModelNameOrPath: this.#modelDir,
        });
        return await this.#loadAdapter(dir);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    const { r, alpha, dropout, targets, useRslora, initA } = start.settings;
    await this.#process.request('adapter-create', {
      lora: { r, alpha, dropout, targets, use_rslora: useRslora, init_a: initA },
      seed: start.seed,
    });
    return { r, alpha, targets };
  }

  async #loadAdapter(dir: string): Promise<AdapterShape> {
    const reply = await this.#process.request('adapter-load', { dir });
    const lora = reply.result.lora as { r: number; alpha: number; targets: Projection[] };
    return { r: lora.r, alpha: lora.alpha, targets: lora.targets };
  }

  async resetOptimizer(settings: OptimizerSettings): Promise<void> {
    await this.#process.request('optimizer-reset', {
      learning_rate: settings.learningRate,
      beta1: settings.beta1,
      beta2: settings.beta2,
      eps: settings.eps,
      weight_decay: settings.weightDecay,
      train_a: settings.trainA,
    });
    this.#optimizerSteps = 0;
    this.#hasOptimizer = true;
  }

  async loadOptimizer(dir: string): Promise<void> {
    const reply = await this.#process.request('optimizer-load', { path: `${dir}/optimizer.safetensors` });
    this.#optimizerSteps = Number(reply.result.step);
  }

  async step(step: EngineStep, onMicroBatch?: MicroBatchProgress): Promise<EngineStepResult> {
    if (step.sequences.length === 0) throw new RangeError('trainStep: no sequences to train on');
    if (!this.#hasOptimizer) throw new EngineError('engine-state', 'the torch engine has no optimiser yet');
    checkOnPolicy(step.sequences);
    const { args, tensors } = stepRequest(step);
    const reply = await this.#process.request('step', args, tensors, (event, data) => {
      if (event === 'micro-batch') onMicroBatch?.(Number(data.done), Number(data.total), Number(data.tokens));
    });
    this.#optimizerSteps = Number(reply.result.optimizer_step);
    return stepResult(reply.result, step.replay?.sequences.length ?? 0);
  }

  async save(dir: string, options: { readonly optimizer: boolean }): Promise<void> {
    await this.#process.request('save', {
      dir,
      optimizer: options.optimizer,
      dtype: 'float32',
      base_model_name_or_path: this.#modelDir,
    });
  }

  async logprobs(
    sequences: readonly (readonly number[])[],
    options: { readonly adapter: boolean },
  ): Promise<number[][]> {
    if (sequences.length === 0) return [];
    const reply = await this.#process.request(
      'logprobs',
      { adapter: options.adapter },
      sequenceTensors(sequences),
    );
    const flat = tensorOf(reply, 'logprobs');
    const out: number[][] = [];
    let at = 0;
    for (const sequence of sequences) {
      const count = Math.max(0, sequence.length - 1);
      out.push(Array.from(flat.subarray(at, at + count)));
      at += count;
    }
    return out;
  }

  async predict(
    sequences: readonly (readonly number[])[],
    query: PredictQuery,
    options: { readonly adapter: boolean; readonly padTokenId: number },
  ): Promise<Prediction> {
    const count = query.rows.length;
    const reply = await this.#process.request(
      'predict',
      { adapter: options.adapter, micro_batches: scoringPlan(sequences) },
      {
        ...sequenceTensors(sequences),
        rows: { dtype: 'int32', shape: [count], data: Int32Array.from(query.rows) },
        positions: { dtype: 'int32', shape: [count], data: Int32Array.from(query.positions) },
        ...(query.tokens
          ? { tokens: { dtype: 'int32', shape: [count], data: Int32Array.from(query.tokens) } }
          : {}),
      },
    );
    return {
      argmax: Array.from(tensorOf(reply, 'argmax')),
      ...(query.tokens ? { logprobs: Array.from(tensorOf(reply, 'logprobs')) } : {}),
    };
  }

  /** The device's peak memory since the engine started (the process's peak RSS on the CPU), in bytes. */
  async peakMemoryBytes(): Promise<number> {
    const reply = await this.#process.request('memory');
    return Number(reply.result.peak_bytes);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#process.close();
  }
}

function tensorOf(reply: Reply, name: string): Int32Array | Float32Array | Uint8Array {
  const tensor = reply.tensors[name];
  if (!tensor) throw new EngineError('engine-bad-frame', `the torch engine's reply has no tensor "${name}"`);
  return tensor.data;
}
