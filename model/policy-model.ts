// The model runtime that the trainer and the local inference endpoint share: a Llama/Qwen2 base model
// loaded from a Hugging Face directory, any number of named LoRA adapters on top, per-token
// logprobs (tensor form for training, host form for scoring); decoding is decode-batch.ts. Backend
// selection (backend.ts) happens before loading; this class does no tokenization.
// Legend: B batch, T positions, D hidden, V vocab.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { attentionMaskBias, positionsFromMask } from './attention-mask.ts';
import { type Decoder, decoderForward, type LoraRoute } from './decoder.ts';
import {
  type DecoderWeights,
  decoderTensors,
  disposeDecoderWeights,
  toDecoderWeights,
} from './decoder-weights.ts';
import { type ModelConfig, parseHfConfig } from './hf-config.ts';
import { loadCheckpointWeights } from './load-weights.ts';
import {
  createLoraAdapter,
  disposeLoraAdapter,
  type LoraAdapter,
  type LoraConfig,
  loraVariables,
  resolveLoraConfig,
} from './lora.ts';
import { loraRoutes } from './lora-routes.ts';
import { loadPeftAdapter, savePeftAdapter } from './peft-adapter.ts';
import { ropeInverseFrequencies } from './rope.ts';
import type { HostTensor, SafetensorsDtype } from './safetensors.ts';
import { tidy } from './tidy.ts';
import { headLogprobs } from './token-logprobs.ts';
import { errorMessage } from '../protocol/error-message.ts';

/** An adapter name for every row, null for the base model, or one entry per row. */
export type AdapterSelection = string | null | readonly (string | null)[];

export type TokenRows = tf.Tensor2D | readonly (readonly number[])[];

export interface ForwardOptions {
  readonly adapter?: AdapterSelection;
  /** B rows of T flags: 1 real token, 0 padding (left or right). Default: every token is real. */
  readonly attentionMask?: readonly (readonly number[])[];
  /** Apply LoRA dropout (set while computing a training loss). */
  readonly training?: boolean;
}

export interface LogprobOptions extends ForwardOptions {
  /**
   * B rows of T − 1 flags: 1 where the logprob is wanted (the tokens a loss trains on). The others
   * come back 0, and the output projection never runs for them. Default: every position.
   */
  readonly targetMask?: readonly ArrayLike<number>[];
}

export class AdapterError extends Error {
  override readonly name = 'AdapterError';
  readonly code = 'invalid-adapter';
}

/** Flat indices b·(T − 1) + t of the set flags of a [B, T − 1] target mask. */
function chosenRows(mask: readonly ArrayLike<number>[], b: number, targets: number): Int32Array {
  if (mask.length !== b || mask.some((row) => row.length !== targets)) {
    throw new RangeError(`targetMask must be ${b} rows of ${targets} flags`);
  }
  const rows: number[] = [];
  mask.forEach((row, r) => {
    for (let at = 0; at < targets; at++) if (row[at] !== 0) rows.push(r * targets + at);
  });
  return Int32Array.from(rows);
}

/** Loads config.json and the safetensors weights of a Hugging Face model directory. */
/** A model directory's config.json, parsed, without its weights. */
export async function loadModelConfig(dir: string): Promise<ModelConfig> {
  const configPath = join(dir, 'config.json');
  let json: unknown;
  try {
    json = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (error) {
    throw new Error(`${configPath}: cannot read model config (${errorMessage(error)})`);
  }
  return parseHfConfig(json, configPath);
}

export async function loadModel(dir: string): Promise<PolicyModel> {
  const config = await loadModelConfig(dir);
  const host = await loadCheckpointWeights(dir, config);
  return PolicyModel.fromHostWeights(config, host, dir);
}

export class PolicyModel {
  readonly decoder: Decoder;
  private readonly adapters = new Map<string, LoraAdapter>();

  private constructor(
    readonly config: ModelConfig,
    weights: DecoderWeights,
    /** Directory the model came from, written as base_model_name_or_path in saved adapters. */
    readonly source: string | null,
  ) {
    this.decoder = { config, weights, inverseFrequencies: ropeInverseFrequencies(config) };
  }

  static fromHostWeights(
    config: ModelConfig,
    host: ReadonlyMap<string, HostTensor>,
    source: string | null = null,
  ): PolicyModel {
    return new PolicyModel(config, toDecoderWeights(config, host), source);
  }

  /** Adds a freshly initialised adapter (B = 0 by default, so outputs are unchanged until trained). */
  addAdapter(name: string, config: Partial<LoraConfig> = {}, options: { seed?: number } = {}): LoraAdapter {
    this.checkNewName(name);
    const adapter = createLoraAdapter(this.config, name, resolveLoraConfig(config), options);
    this.adapters.set(name, adapter);
    return adapter;
  }

  /** Loads a PEFT adapter directory under `name`. */
  async loadAdapter(name: string, dir: string): Promise<LoraAdapter> {
    this.checkNewName(name);
    const adapter = await loadPeftAdapter(dir, this.config, name);
    this.adapters.set(name, adapter);
    return adapter;
  }

  /** Writes adapter `name` as a PEFT directory (adapter_config.json + adapter_model.safetensors). */
  async saveAdapter(
    name: string,
    dir: string,
    options: { dtype?: SafetensorsDtype; baseModelNameOrPath?: string | null } = {},
  ): Promise<void> {
    await savePeftAdapter(dir, this.adapter(name), {
      dtype: options.dtype,
      baseModelNameOrPath:
        options.baseModelNameOrPath === undefined ? this.source : options.baseModelNameOrPath,
    });
  }

  removeAdapter(name: string): void {
    disposeLoraAdapter(this.adapter(name));
    this.adapters.delete(name);
  }

  adapterNames(): string[] {
    return [...this.adapters.keys()];
  }

  adapter(name: string): LoraAdapter {
    const adapter = this.adapters.get(name);
    if (!adapter) {
      const known = this.adapterNames();
      throw new AdapterError(
        `no adapter named "${name}"; loaded: ${known.length > 0 ? known.join(', ') : 'none'}`,
      );
    }
    return adapter;
  }

  /** The only tensors that receive gradients: the adapter's A and B matrices, less frozen ones. */
  trainableVariables(name: string): tf.Variable[] {
    return loraVariables(this.adapter(name)).filter((variable) => variable.trainable);
  }

  /** Every base-model tensor (frozen), e.g. to check that training leaves them alone. */
  baseTensors(): tf.Tensor[] {
    return decoderTensors(this.decoder.weights);
  }

  /** Final hidden states [B, T, D]. */
  forwardHidden(ids: TokenRows, options: ForwardOptions = {}): tf.Tensor3D {
    return tidy(() => {
      const input = this.toIdTensor(ids);
      const [b, t] = input.shape;
      const mask = options.attentionMask ?? Array.from({ length: b }, () => new Array<number>(t).fill(1));
      if (mask.length !== b || mask.some((row) => row.length !== t)) {
        throw new RangeError(`attentionMask must be ${b} rows of ${t} flags`);
      }
      const positions = positionsFromMask(mask);
      const routes: LoraRoute[] = loraRoutes(this.adaptersFor(options.adapter, b), t);
      const { hidden } = decoderForward(this.decoder, {
        ids: input,
        positions: tf.tensor2d(
          positions.flatMap((row) => Array.from(row)),
          [b, t],
          'int32',
        ),
        maskBias: attentionMaskBias(mask, t),
        lora: routes,
        training: options.training,
      });
      return hidden;
    });
  }

  /** Logits [B, T, V] (allocates B·T·V floats: for scoring short batches and tests). */
  forwardLogits(ids: TokenRows, options: ForwardOptions = {}): tf.Tensor3D {
    return tidy(() => {
      const hidden = this.forwardHidden(ids, options);
      const [b, t, d] = hidden.shape;
      const logits = tf.matMul(tf.reshape(hidden, [b * t, d]), this.decoder.weights.lmHeadT); // [B·T, V]
      return tf.reshape(logits, [b, t, this.config.vocabSize]) as tf.Tensor3D;
    });
  }

  /**
   * out[b, t] = log p(ids[b, t + 1] | ids[b, ≤ t]), shape [B, T − 1]: the trainer's hot path. Call it
   * inside tf.variableGrads(f, model.trainableVariables(name)); gradients reach only the adapter.
   * Entries whose target is padding are meaningless: mask them in the loss.
   */
  forwardLogprobs(ids: TokenRows, options: LogprobOptions = {}): tf.Tensor2D {
    return tidy(() => {
      const input = this.toIdTensor(ids);
      const [b, t] = input.shape;
      if (t < 2) throw new RangeError(`forwardLogprobs needs at least 2 positions per row, got ${t}`);
      const hidden = this.forwardHidden(input, options); // [B, T, D]
      const d = this.config.hiddenSize;
      const context = tf.reshape(tf.slice(hidden, [0, 0, 0], [b, t - 1, d]), [b * (t - 1), d]) as tf.Tensor2D; // [B·(T−1), D]
      const targets = tf.reshape(tf.slice(input, [0, 1], [b, t - 1]), [b * (t - 1)]) as tf.Tensor1D; // [B·(T−1)]
      const { lmHead, lmHeadT } = this.decoder.weights;
      const rows = options.targetMask ? chosenRows(options.targetMask, b, t - 1) : undefined;
      return tf.reshape(headLogprobs(context, lmHead, lmHeadT, targets, { rows }), [b, t - 1]) as tf.Tensor2D;
    });
  }

  /** Host form: for each sequence, the logprob of each token after the first (length − 1 values). */
  async logprobs(
    sequences: readonly (readonly number[])[],
    options: { adapter?: AdapterSelection } = {},
  ): Promise<number[][]> {
    if (sequences.length === 0) return [];
    const longest = Math.max(2, ...sequences.map((s) => s.length));
    const padded = sequences.map((s) => [...s, ...new Array<number>(longest - s.length).fill(0)]);
    const mask = sequences.map((s) => Array.from({ length: longest }, (_, i) => (i < s.length ? 1 : 0)));
    const result = this.forwardLogprobs(padded, { adapter: options.adapter, attentionMask: mask });
    const values = (await result.data()) as Float32Array;
    result.dispose();
    return sequences.map((s, row) =>
      Array.from(values.subarray(row * (longest - 1), row * (longest - 1) + Math.max(0, s.length - 1))),
    );
  }

  /** Frees the base weights and every adapter. */
  dispose(): void {
    for (const name of this.adapterNames()) this.removeAdapter(name);
    disposeDecoderWeights(this.decoder.weights);
  }

  private checkNewName(name: string): void {
    if (name.length === 0) throw new AdapterError('adapter name must not be empty');
    if (this.adapters.has(name))
      throw new AdapterError(`an adapter named "${name}" is already loaded; remove it first`);
  }

  /** One adapter (or null for the base model) per row of a batch of `batch`, from a selection. */
  adaptersFor(selection: AdapterSelection | undefined, batch: number): (LoraAdapter | null)[] {
    if (selection === undefined || selection === null || typeof selection === 'string') {
      const adapter = selection ? this.adapter(selection) : null;
      return new Array(batch).fill(adapter);
    }
    if (selection.length !== batch) {
      throw new RangeError(`adapter list has ${selection.length} entries for a batch of ${batch}`);
    }
    return selection.map((name) => (name ? this.adapter(name) : null));
  }

  private toIdTensor(ids: TokenRows): tf.Tensor2D {
    if (ids instanceof tf.Tensor) {
      if (ids.rank !== 2 || ids.dtype !== 'int32') {
        throw new RangeError(`token ids must be an int32 [B, T] tensor, got ${ids.dtype} [${ids.shape}]`);
      }
      return ids as tf.Tensor2D;
    }
    const b = ids.length;
    const t = ids[0]?.length ?? 0;
    if (b === 0 || t === 0) throw new RangeError('token ids must hold at least one row and one position');
    ids.forEach((row, index) => {
      if (row.length !== t)
        throw new RangeError(
          `token id rows must be equally long: row ${index} has ${row.length}, row 0 has ${t}`,
        );
      this.checkIds(row, index);
    });
    return tf.tensor2d(ids.flat(), [b, t], 'int32');
  }

  private checkIds(row: readonly number[], index: number): void {
    const bad = row.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= this.config.vocabSize);
    if (bad >= 0) {
      throw new RangeError(
        `row ${index}, position ${bad}: token id ${row[bad]} is outside the vocabulary [0, ${this.config.vocabSize})`,
      );
    }
  }
}
