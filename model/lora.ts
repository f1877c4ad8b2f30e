// LoRA adapters (Hu et al. 2021, arXiv:2106.09685): a frozen projection W gains a trainable low-rank
// update, y = W·x + (alpha / r)·B·A·x, with A [r, in] and B [out, r]. Initialised as PEFT does by
// default (A Kaiming-uniform, B zero, so a new adapter changes nothing). Variables are stored
// transposed (Aᵀ [in, r], Bᵀ [r, out]) so the forward pass needs no transposed matmul; PEFT files
// hold A and B (peft-adapter.ts converts). Leaves out DoRA, rank/alpha patterns and bias training.
import * as tf from '@tensorflow/tfjs';
import type { ModelConfig, Projection } from './hf-config.ts';
import { projections } from './hf-config.ts';
import { type LoraInitA, loraInitAs } from './lora-init-a.ts';
import { createRng } from './rng.ts';
import { projectionShape } from './weight-names.ts';

export interface LoraConfig {
  /** Rank r of the update. PEFT default: 8. */
  readonly r: number;
  /** Scale numerator: the update is multiplied by alpha / r (alpha / √r with rsLoRA). PEFT default: 8. */
  readonly alpha: number;
  /** Dropout on the adapter's input while training (PEFT `lora_dropout`). PEFT default: 0. */
  readonly dropout: number;
  /** Projections that get an adapter. PEFT's default for Llama/Qwen2: q_proj, v_proj. */
  readonly targets: readonly Projection[];
  /** rsLoRA scaling alpha / √r (Kalajdzievski 2023, arXiv:2312.03732). PEFT default: false. */
  readonly useRslora: boolean;
  /** true: B = 0 so the adapter starts as a no-op (PEFT default); false: B random too (PEFT's test init). */
  readonly initLoraWeights: boolean;
  /** How a new adapter's A starts. PEFT default: kaiming-uniform. Only creation reads it. */
  readonly initA: LoraInitA;
}

export const defaultLoraConfig: LoraConfig = {
  r: 8,
  alpha: 8,
  dropout: 0,
  targets: ['q_proj', 'v_proj'],
  useRslora: false,
  initLoraWeights: true,
  initA: 'kaiming-uniform',
};

/** Aᵀ [in, r] and Bᵀ [r, out] of one projection. */
export interface LoraPair {
  readonly aT: tf.Variable;
  readonly bT: tf.Variable;
}

export interface LoraAdapter {
  readonly name: string;
  readonly config: LoraConfig;
  /** alpha / r, or alpha / √r with rsLoRA. */
  readonly scaling: number;
  /** Per layer, the adapted projections. */
  readonly layers: readonly Partial<Record<Projection, LoraPair>>[];
}

export class LoraConfigError extends Error {
  override readonly name = 'LoraConfigError';
  readonly code = 'invalid-lora-config';
}

/** Fills in defaults and checks ranges; names the bad field. */
export function resolveLoraConfig(partial: Partial<LoraConfig> = {}): LoraConfig {
  const config = { ...defaultLoraConfig, ...partial };
  if (!Number.isInteger(config.r) || config.r < 1)
    throw new LoraConfigError(`r must be a positive integer, got ${config.r}`);
  if (!(config.alpha > 0)) throw new LoraConfigError(`alpha must be positive, got ${config.alpha}`);
  if (!(config.dropout >= 0 && config.dropout < 1)) {
    throw new LoraConfigError(`dropout must be in [0, 1), got ${config.dropout}`);
  }
  if (!loraInitAs.includes(config.initA)) {
    throw new LoraConfigError(`initA must be one of ${loraInitAs.join(', ')}, got ${String(config.initA)}`);
  }
  if (config.targets.length === 0) throw new LoraConfigError('targets must name at least one projection');
  const unknown = config.targets.filter((target) => !projections.includes(target));
  if (unknown.length > 0) {
    throw new LoraConfigError(
      `unknown LoRA targets ${unknown.join(', ')}; choose from ${projections.join(', ')}`,
    );
  }
  if (new Set(config.targets).size !== config.targets.length) {
    throw new LoraConfigError(`targets repeat a projection: ${config.targets.join(', ')}`);
  }
  return { ...config, targets: projections.filter((p) => config.targets.includes(p)) };
}

export function loraScaling(config: LoraConfig): number {
  return config.useRslora ? config.alpha / Math.sqrt(config.r) : config.alpha / config.r;
}

let variableCounter = 0;

/** Trainable variables are named `lora/<n>/<adapter>/layers.<i>.<proj>.lora_{A,B}` (unique per process). */
function variableName(adapter: string, layer: number, projection: Projection, which: 'A' | 'B'): string {
  return `lora/${variableCounter}/${adapter}/layers.${layer}.${projection}.lora_${which}`;
}

/**
 * Builds an adapter from given transposed matrices, or initialises them: Aᵀ ~ U(−1/√in, 1/√in),
 * which is torch's kaiming_uniform_(a=√5) on A [r, in] (gain √(1/3), bound gain·√(3/fan_in)) as in
 * PEFT's `reset_lora_parameters`, or orthogonal (see lora-init-a.ts); B zero, or U(−1/√r, 1/√r)
 * (nn.Linear's init) with initLoraWeights false.
 */
export function createLoraAdapter(
  model: ModelConfig,
  name: string,
  config: LoraConfig,
  options: {
    seed?: number;
    weights?: (layer: number, projection: Projection) => { aT: tf.Tensor2D; bT: tf.Tensor2D };
  } = {},
): LoraAdapter {
  variableCounter += 1;
  const rng = createRng(options.seed ?? 0);
  const uniform = (count: number, bound: number) => {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = (2 * rng.next() - 1) * bound;
    return out;
  };
  const layers: Partial<Record<Projection, LoraPair>>[] = [];
  for (let layer = 0; layer < model.numLayers; layer++) {
    const entry: Partial<Record<Projection, LoraPair>> = {};
    for (const projection of config.targets) {
      const [out, input] = projectionShape(model, projection);
      const given = options.weights?.(layer, projection);
      const aT =
        given?.aT ??
        tf.tensor2d(
          config.initA === 'orthogonal'
            ? orthogonalAT(input, config.r, 1 / loraScaling(config), rng)
            : uniform(input * config.r, 1 / Math.sqrt(input)),
          [input, config.r],
        );
      const bT =
        given?.bT ??
        (config.initLoraWeights
          ? tf.zeros([config.r, out])
          : tf.tensor2d(uniform(config.r * out, 1 / Math.sqrt(config.r)), [config.r, out]));
      entry[projection] = {
        aT: tf.variable(aT, true, variableName(name, layer, projection, 'A')),
        bT: tf.variable(bT, true, variableName(name, layer, projection, 'B')),
      };
      tf.dispose([aT, bT]);
    }
    layers.push(entry);
  }
  return { name, config, scaling: loraScaling(config), layers };
}

/**
 * Aᵀ [in, r] (row-major) with orthonormal columns of A's rows when r ≤ in, else orthonormal rows,
 * times `scale`: Gram–Schmidt (twice, for float rounding) on Gaussian vectors.
 */
function orthogonalAT(input: number, r: number, scale: number, rng: { normal(): number }): Float32Array {
  const count = Math.min(input, r);
  const length = Math.max(input, r);
  const vectors: Float64Array[] = [];
  for (let k = 0; k < count; k++) {
    const v = Float64Array.from({ length }, () => rng.normal());
    for (let pass = 0; pass < 2; pass++) {
      for (const u of vectors) {
        let dot = 0;
        for (let i = 0; i < length; i++) dot += (u[i] as number) * (v[i] as number);
        for (let i = 0; i < length; i++) v[i] = (v[i] as number) - dot * (u[i] as number);
      }
    }
    let norm = 0;
    for (let i = 0; i < length; i++) norm += (v[i] as number) ** 2;
    norm = Math.sqrt(norm);
    for (let i = 0; i < length; i++) v[i] = (v[i] as number) / norm;
    vectors.push(v);
  }
  // r ≤ in: vector k is A's row k, i.e. Aᵀ's column k. r > in: vector k is A's column k = Aᵀ's row k.
  const out = new Float32Array(input * r);
  for (let k = 0; k < count; k++) {
    const v = vectors[k] as Float64Array;
    for (let i = 0; i < length; i++) {
      if (r <= input) out[i * r + k] = (v[i] as number) * scale;
      else out[k * r + i] = (v[i] as number) * scale;
    }
  }
  return out;
}

/** Freezes (or unfreezes) every A of the adapter: LoRA-FA trains B alone (see lora-init-a.ts). */
export function setLoraATrainable(adapter: LoraAdapter, trainable: boolean): void {
  for (const layer of adapter.layers)
    for (const projection of projections) {
      const pair = layer[projection];
      if (pair) pair.aT.trainable = trainable;
    }
}

/** The adapter's variables, layer by layer, A before B (frozen ones included). */
export function loraVariables(adapter: LoraAdapter): tf.Variable[] {
  return adapter.layers.flatMap((layer) =>
    projections.flatMap((projection) => {
      const pair = layer[projection];
      return pair ? [pair.aT, pair.bT] : [];
    }),
  );
}

export function disposeLoraAdapter(adapter: LoraAdapter): void {
  for (const variable of loraVariables(adapter)) variable.dispose();
}
