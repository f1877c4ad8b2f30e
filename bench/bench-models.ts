// The model shapes the model benches run, with random weights: the tiny and small presets (vocabulary
// of the tiny tokenizer) everywhere, and Qwen2.5-0.5B's shape on a hardware GPU. `--models a,b` picks
// them explicitly (e.g. the 0.5B shape on a CPU backend, which takes minutes per pass there).
import type { SelectedBackend } from '../model/backend.ts';
import { type ModelConfig, parseHfConfig } from '../model/hf-config.ts';
import { parameterCount, presetConfig } from '../model/init-model.ts';
import type { HostTensor } from '../model/safetensors.ts';
import { tinyTokenizerFiles } from '../model/tokenizer/tiny-tokenizer.ts';
import { formatBytes } from '../model/webgpu-adapter.ts';
import { webgpuAdapter } from '../model/webgpu-backend.ts';
import { expectedWeights } from '../model/weight-names.ts';

export type BenchModelName = 'tiny' | 'small' | 'qwen2.5-0.5b';

export interface BenchModel {
  readonly name: BenchModelName;
  readonly config: ModelConfig;
}

/** The fields of Qwen/Qwen2.5-0.5B's config.json on the Hugging Face Hub that shape the model
 * (0.49 B parameters, 0.36 B without the tied embedding). */
const qwen25HalfB = {
  architectures: ['Qwen2ForCausalLM'],
  model_type: 'qwen2',
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  max_position_embeddings: 32768,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  use_sliding_window: false,
  hidden_act: 'silu',
  initializer_range: 0.02,
  bos_token_id: 151643,
  eos_token_id: 151643,
};

function tinyVocabulary(preset: 'tiny' | 'small'): ModelConfig {
  return presetConfig(preset, 'qwen2', {
    vocabSize: tinyTokenizerFiles().vocabSize,
    bosTokenId: null,
    eosTokenIds: [],
    padTokenId: null,
  });
}

const builders = {
  tiny: () => tinyVocabulary('tiny'),
  small: () => tinyVocabulary('small'),
  'qwen2.5-0.5b': () => parseHfConfig(qwen25HalfB, 'Qwen2.5-0.5B config'),
} satisfies Record<BenchModelName, () => ModelConfig>;

function isBenchModelName(value: string): value is BenchModelName {
  return Object.hasOwn(builders, value);
}

/** Bytes of the largest weight, the embedding (V × D float32): one buffer binding on webgpu. */
function largestWeightBytes(config: ModelConfig): number {
  return config.vocabSize * config.hiddenSize * 4;
}

/** The models to run on `backend`; prints why one is left out. */
export function benchModels(backend: SelectedBackend, requested: string | undefined): BenchModel[] {
  let names: BenchModelName[];
  if (requested !== undefined) {
    names = requested.split(',').map((name) => {
      const trimmed = name.trim();
      if (!isBenchModelName(trimmed)) {
        throw new Error(
          `--models: unknown model "${trimmed}"; choose from ${Object.keys(builders).join(', ')}`,
        );
      }
      return trimmed;
    });
  } else {
    names = ['tiny', 'small'];
    if (backend.hardwareGpu) names.push('qwen2.5-0.5b');
    else {
      console.log(
        `qwen2.5-0.5b: skipped, ${backend.choice} on ${backend.device} is not a GPU (--models tiny,small,qwen2.5-0.5b runs it anyway)`,
      );
    }
  }
  const models: BenchModel[] = [];
  for (const name of names) {
    const config = builders[name]();
    const binding = backend.choice.startsWith('webgpu')
      ? webgpuAdapter()?.maxStorageBufferBindingSize
      : undefined;
    if (binding !== undefined && largestWeightBytes(config) > binding) {
      console.log(
        `${name}: skipped, its ${formatBytes(largestWeightBytes(config))} embedding exceeds this adapter's ${formatBytes(binding)} storage-buffer binding limit`,
      );
      continue;
    }
    models.push({ name, config });
  }
  return models;
}

export function describeBenchModel(model: BenchModel): string {
  const { config } = model;
  return `${model.name}: ${(parameterCount(config) / 1e6).toFixed(1)} M parameters (hidden ${config.hiddenSize}, ${config.numLayers} layers, ${config.numHeads}/${config.numKvHeads} heads, intermediate ${config.intermediateSize}, vocab ${config.vocabSize})`;
}

/**
 * Random weights fast enough for 0.5 B parameters (init-model's Gaussian draw takes over a minute
 * there): norms 1, biases 0, everything else uniform on ±0.02·√3, which has the same standard deviation
 * 0.02 as transformers' N(0, 0.02²) init. Speed does not depend on the values; xorshift32 (Marsaglia
 * 2003) keeps it seeded and cheap.
 */
export function benchWeights(config: ModelConfig, seed = 1): Map<string, HostTensor> {
  let state = seed >>> 0 || 1;
  const halfWidth = 0.02 * Math.sqrt(3);
  const out = new Map<string, HostTensor>();
  for (const [name, shape] of expectedWeights(config)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('layernorm.weight') || name === 'model.norm.weight') data.fill(1);
    else if (!name.endsWith('.bias')) {
      for (let i = 0; i < data.length; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        data[i] = ((state >>> 0) / 2 ** 32 - 0.5) * 2 * halfWidth;
      }
    }
    out.set(name, { shape, data });
  }
  return out;
}
