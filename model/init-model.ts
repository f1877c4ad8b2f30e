// Random Llama/Qwen2/Qwen3 checkpoints for tests and the demo (no real weights can be downloaded
// offline): a config from a size preset and weights initialised as transformers' `_init_weights` does —
// Linear and Embedding ~ N(0, initializer_range²), biases 0, RMSNorm weights 1, the padding row 0.
// The real models' shapes are in real-presets.ts.
import { architectures, type Architecture, type ModelConfig } from './hf-config.ts';
import { createRng } from './rng.ts';
import type { HostTensor } from './safetensors.ts';
import type { FillTensor } from './write-safetensors-stream.ts';
import { expectedWeights, isNormWeight } from './weight-names.ts';

export type ModelPreset = 'tiny' | 'small';

interface PresetShape {
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
}

/** tiny: fast enough for unit tests on 2 CPU cores; small: the larger bench size. Intermediate sizes
 * follow Llama's ≈ 8/3·hidden rounded up to a multiple of 16. */
export const modelPresets = {
  tiny: { hiddenSize: 64, intermediateSize: 176, numLayers: 2, numHeads: 4, numKvHeads: 2 },
  small: { hiddenSize: 256, intermediateSize: 688, numLayers: 4, numHeads: 8, numKvHeads: 2 },
} satisfies Record<ModelPreset, PresetShape>;

export function isModelPreset(value: string): value is ModelPreset {
  return Object.hasOwn(modelPresets, value);
}

interface FamilyDefaults {
  readonly tieWordEmbeddings: boolean;
  readonly ropeTheta: number;
  readonly rmsNormEps: number;
  /** head_dim as a multiple of hidden / heads. */
  readonly headDimFactor: number;
}

/** Per-family choices that match the real models: Qwen2.5 small models tie embeddings and use
 * θ = 1e6, ε = 1e-6; Llama 3 uses θ = 5e5, ε = 1e-5 and a separate lm_head; Qwen3-0.6B ties, uses
 * θ = 1e6, ε = 1e-6 and heads twice as wide as hidden / heads (16 × 128 for hidden 1024), so a tiny
 * Qwen3 keeps q_proj's output (heads · head_dim) wider than its input as the real one does. */
const familyDefaults = {
  qwen2: { tieWordEmbeddings: true, ropeTheta: 1_000_000, rmsNormEps: 1e-6, headDimFactor: 1 },
  llama: { tieWordEmbeddings: false, ropeTheta: 500_000, rmsNormEps: 1e-5, headDimFactor: 1 },
  qwen3: { tieWordEmbeddings: true, ropeTheta: 1_000_000, rmsNormEps: 1e-6, headDimFactor: 2 },
} satisfies Record<Architecture, FamilyDefaults>;

export interface VocabularyIds {
  readonly vocabSize: number;
  readonly bosTokenId: number | null;
  readonly eosTokenIds: readonly number[];
  readonly padTokenId: number | null;
}

export function presetConfig(
  preset: ModelPreset,
  architecture: Architecture,
  vocabulary: VocabularyIds,
): ModelConfig {
  const shape: PresetShape = modelPresets[preset];
  const { headDimFactor, ...family } = familyDefaults[architecture];
  const bias = architectures[architecture].bias({
    model_type: architecture,
    vocab_size: vocabulary.vocabSize,
    hidden_size: shape.hiddenSize,
    intermediate_size: shape.intermediateSize,
    num_hidden_layers: shape.numLayers,
    num_attention_heads: shape.numHeads,
  });
  return {
    architecture,
    ...shape,
    vocabSize: vocabulary.vocabSize,
    headDim: (headDimFactor * shape.hiddenSize) / shape.numHeads,
    ...family,
    ropeScaling: null,
    bias,
    maxPositionEmbeddings: 4096,
    initializerRange: 0.02,
    bosTokenId: vocabulary.bosTokenId,
    eosTokenIds: vocabulary.eosTokenIds,
    padTokenId: vocabulary.padTokenId,
  };
}

export interface RandomWeightOptions {
  /** Std of the token embedding (and of lm_head when untied). Default: `config.initializerRange`, as
   *  transformers' `_init_weights` does. A model whose base stays frozen (trained only through LoRA
   *  on the projections) needs more: the final RMSNorm output has norm √D, so a logit is at most
   *  √D·|e| = D·std, which at 0.02 and D = 64 caps every logit near 1.3 and the per-token loss near
   *  ln(vocab) − 1.3 (measured on the demo's warm start). */
  readonly embeddingStd?: number;
}

/**
 * The values of every tensor the config needs, drawn from one seeded stream in state-dict order, for a
 * writer that takes them chunk by chunk (write-safetensors-stream.ts): `fill` must be called for the
 * tensors in expectedWeights' order and for each tensor's chunks in order, so any chunking gives the
 * same values (those randomWeights has always produced: norms and biases draw nothing, the padding
 * row is drawn and then zeroed).
 */
export function randomInit(config: ModelConfig, seed: number, options: RandomWeightOptions = {}): FillTensor {
  const rng = createRng(seed);
  const embeddingStd = options.embeddingStd ?? config.initializerRange;
  if (!(embeddingStd > 0 && Number.isFinite(embeddingStd)))
    throw new RangeError(`embeddingStd must be a positive number, got ${embeddingStd}`);
  const paddingRow =
    config.padTokenId === null
      ? null
      : [config.padTokenId * config.hiddenSize, (config.padTokenId + 1) * config.hiddenSize];
  return (name, start, target) => {
    if (isNormWeight(name)) target.fill(1);
    else if (name.endsWith('.bias')) target.fill(0);
    else {
      const std =
        name === 'model.embed_tokens.weight' || name === 'lm_head.weight'
          ? embeddingStd
          : config.initializerRange;
      rng.fillNormal(target, std);
      if (name === 'model.embed_tokens.weight' && paddingRow) {
        const [from, to] = paddingRow as [number, number];
        const end = start + target.length;
        if (from < end && to > start) target.fill(0, Math.max(from - start, 0), Math.min(to, end) - start);
      }
    }
  };
}

/** Seeded random weights for every tensor the config needs (state-dict order), held in memory. */
export function randomWeights(
  config: ModelConfig,
  seed: number,
  options: RandomWeightOptions = {},
): Map<string, HostTensor> {
  const fill = randomInit(config, seed, options);
  const out = new Map<string, HostTensor>();
  for (const [name, shape] of expectedWeights(config)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    fill(name, 0, data);
    out.set(name, { shape, data });
  }
  return out;
}

/** Parameter count (embedding and, when untied, lm_head included). */
export function parameterCount(config: ModelConfig): number {
  let total = 0;
  for (const shape of expectedWeights(config).values()) total += shape.reduce((a, b) => a * b, 1);
  return total;
}
