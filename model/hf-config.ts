// A Hugging Face `config.json` for a decoder-only Llama, Qwen2 or Qwen3 model, validated with zod and
// turned into the typed `ModelConfig` the runtime uses. Defaults follow transformers' LlamaConfig,
// Qwen2Config and Qwen3Config. Leaves out sliding-window attention, quantized checkpoints and other
// model types.
import { z } from 'zod';
import { formatIssues } from '../protocol/format-issues.ts';

export type Architecture = 'llama' | 'qwen2' | 'qwen3';

/** The seven linear projections of a decoder layer, by their Hugging Face / PEFT module names. */
export type Projection = 'q_proj' | 'k_proj' | 'v_proj' | 'o_proj' | 'gate_proj' | 'up_proj' | 'down_proj';
export const projections: readonly Projection[] = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
];

export type RopeScaling =
  | { readonly type: 'linear'; readonly factor: number }
  | {
      readonly type: 'llama3';
      readonly factor: number;
      readonly lowFreqFactor: number;
      readonly highFreqFactor: number;
      readonly originalMaxPositionEmbeddings: number;
    };

export interface ModelConfig {
  readonly architecture: Architecture;
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  /** Grouped-query attention: each key/value head serves numHeads / numKvHeads query heads. */
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
  readonly ropeScaling: RopeScaling | null;
  /** When true the output projection is the input embedding matrix (no `lm_head.weight`). */
  readonly tieWordEmbeddings: boolean;
  /** Which projections carry a bias (Qwen2: q, k, v; Llama: per `attention_bias` / `mlp_bias`). */
  readonly bias: Readonly<Record<Projection, boolean>>;
  readonly maxPositionEmbeddings: number;
  readonly initializerRange: number;
  readonly bosTokenId: number | null;
  readonly eosTokenIds: readonly number[];
  readonly padTokenId: number | null;
}

interface ArchitectureSpec {
  /** The `architectures[0]` class name transformers and vLLM use to pick the model. */
  readonly hfClass: string;
  readonly defaultMaxPositions: number;
  /** head_dim when config.json leaves it out. */
  readonly defaultHeadDim: (raw: HfConfigJson) => number;
  readonly bias: (raw: HfConfigJson) => Record<Projection, boolean>;
  /** Per-head RMSNorm of queries and keys after their projection, before RoPE (Qwen3's q_norm/k_norm). */
  readonly qkNorm: boolean;
}

const noBias = (raw: HfConfigJson): Record<Projection, boolean> => {
  const attention = raw.attention_bias ?? false;
  const mlp = raw.mlp_bias ?? false;
  return {
    q_proj: attention,
    k_proj: attention,
    v_proj: attention,
    o_proj: attention,
    gate_proj: mlp,
    up_proj: mlp,
    down_proj: mlp,
  };
};

const hiddenOverHeads = (raw: HfConfigJson): number => raw.hidden_size / raw.num_attention_heads;

/** transformers: LlamaAttention uses `attention_bias` on q/k/v/o and LlamaMLP `mlp_bias`; Qwen2Attention
 * hard-codes bias=True on q/k/v and False on o, and its MLP has no bias; Qwen3Attention uses
 * `attention_bias` (default false) on q/k/v/o, Qwen3MLP has no bias, and Qwen3Config's head_dim
 * defaults to 128 rather than hidden / heads (models/qwen3/configuration_qwen3.py, modeling_qwen3.py). */
export const architectures = {
  llama: {
    hfClass: 'LlamaForCausalLM',
    defaultMaxPositions: 2048,
    defaultHeadDim: hiddenOverHeads,
    bias: noBias,
    qkNorm: false,
  },
  qwen2: {
    hfClass: 'Qwen2ForCausalLM',
    defaultMaxPositions: 32768,
    defaultHeadDim: hiddenOverHeads,
    qkNorm: false,
    bias: () => ({
      q_proj: true,
      k_proj: true,
      v_proj: true,
      o_proj: false,
      gate_proj: false,
      up_proj: false,
      down_proj: false,
    }),
  },
  qwen3: {
    hfClass: 'Qwen3ForCausalLM',
    defaultMaxPositions: 32768,
    defaultHeadDim: () => 128,
    qkNorm: true,
    // Qwen3MLP ignores mlp_bias.
    bias: (raw) => noBias({ ...raw, mlp_bias: false }),
  },
} satisfies Record<Architecture, ArchitectureSpec>;

/** Whether queries and keys get a per-head RMSNorm (`self_attn.q_norm` / `k_norm`, shape [head_dim]). */
export function hasQkNorm(config: ModelConfig): boolean {
  return architectures[config.architecture].qkNorm;
}

const positiveInt = z.number().int().positive();
const tokenId = z.number().int().nonnegative();

const ropeScalingSchema = z.looseObject({
  rope_type: z.string().optional(),
  rope_theta: z.number().positive().optional(),
  partial_rotary_factor: z.number().positive().optional(),
  type: z.string().optional(),
  factor: z.number().positive().optional(),
  low_freq_factor: z.number().positive().optional(),
  high_freq_factor: z.number().positive().optional(),
  original_max_position_embeddings: positiveInt.optional(),
});

const hfConfigSchema = z.looseObject({
  model_type: z.string(),
  vocab_size: positiveInt,
  hidden_size: positiveInt,
  intermediate_size: positiveInt,
  num_hidden_layers: positiveInt,
  num_attention_heads: positiveInt,
  num_key_value_heads: positiveInt.nullish(),
  head_dim: positiveInt.nullish(),
  hidden_act: z.string().optional(),
  rms_norm_eps: z.number().positive().optional(),
  rope_theta: z.number().positive().optional(),
  rope_scaling: ropeScalingSchema.nullish(),
  // transformers ≥ 5 writes θ and the scaling rule here instead of rope_theta / rope_scaling.
  rope_parameters: ropeScalingSchema.nullish(),
  tie_word_embeddings: z.boolean().optional(),
  attention_bias: z.boolean().optional(),
  mlp_bias: z.boolean().optional(),
  max_position_embeddings: positiveInt.optional(),
  initializer_range: z.number().positive().optional(),
  use_sliding_window: z.boolean().optional(),
  quantization_config: z.unknown().optional(),
  bos_token_id: tokenId.nullish(),
  eos_token_id: z.union([tokenId, z.array(tokenId)]).nullish(),
  pad_token_id: tokenId.nullish(),
});
export type HfConfigJson = z.infer<typeof hfConfigSchema>;

/** A config.json that cannot be used; the message names the field and says what is accepted. */
export class ModelConfigError extends Error {
  override readonly name = 'ModelConfigError';
  readonly code = 'invalid-model-config';
}

export function isArchitecture(value: string): value is Architecture {
  return Object.hasOwn(architectures, value);
}

/** Validates a parsed config.json and returns the runtime's typed view of it. */
export function parseHfConfig(json: unknown, source = 'config.json'): ModelConfig {
  const modelType = (json as { model_type?: unknown } | null)?.model_type;
  if (typeof modelType === 'string' && !isArchitecture(modelType)) {
    throw new ModelConfigError(
      `${source}: model_type "${modelType}" is not supported; supported: ${Object.keys(architectures).join(', ')}`,
    );
  }
  const parsed = hfConfigSchema.safeParse(json);
  if (!parsed.success) throw new ModelConfigError(`${source}: ${formatIssues(parsed.error)}`);
  const raw = parsed.data;
  const architecture = raw.model_type as Architecture;
  if (raw.hidden_act !== undefined && raw.hidden_act !== 'silu') {
    throw new ModelConfigError(
      `${source}: hidden_act "${raw.hidden_act}" is not supported; only "silu" (SwiGLU)`,
    );
  }
  if (raw.use_sliding_window) {
    throw new ModelConfigError(`${source}: use_sliding_window=true is not supported; set it to false`);
  }
  if (raw.quantization_config !== undefined && raw.quantization_config !== null) {
    throw new ModelConfigError(`${source}: quantized checkpoints (quantization_config) are not supported`);
  }
  const numHeads = raw.num_attention_heads;
  const numKvHeads = raw.num_key_value_heads ?? numHeads;
  if (numHeads % numKvHeads !== 0) {
    throw new ModelConfigError(
      `${source}: num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`,
    );
  }
  const spec = architectures[architecture];
  const headDim = raw.head_dim ?? spec.defaultHeadDim(raw);
  if (!Number.isInteger(headDim)) {
    throw new ModelConfigError(
      `${source}: hidden_size (${raw.hidden_size}) must be a multiple of num_attention_heads (${numHeads}) when head_dim is not given`,
    );
  }
  if (headDim % 2 !== 0)
    throw new ModelConfigError(`${source}: head_dim (${headDim}) must be even for rotary embeddings`);
  // transformers' convert_rope_params_to_dict: rope_scaling, when set, replaces rope_parameters, and
  // the θ inside that dict wins over a top-level rope_theta (modeling_rope_utils.py).
  const rope = raw.rope_scaling ?? raw.rope_parameters ?? null;
  if (rope?.partial_rotary_factor !== undefined && rope.partial_rotary_factor !== 1) {
    throw new ModelConfigError(
      `${source}: partial_rotary_factor ${rope.partial_rotary_factor} is not supported; only 1 (RoPE on the whole head)`,
    );
  }
  const eos = raw.eos_token_id;
  return {
    architecture,
    vocabSize: raw.vocab_size,
    hiddenSize: raw.hidden_size,
    intermediateSize: raw.intermediate_size,
    numLayers: raw.num_hidden_layers,
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: raw.rms_norm_eps ?? 1e-6,
    ropeTheta: rope?.rope_theta ?? raw.rope_theta ?? 10000,
    ropeScaling: parseRopeScaling(rope, source),
    tieWordEmbeddings: raw.tie_word_embeddings ?? false,
    bias: spec.bias(raw),
    maxPositionEmbeddings: raw.max_position_embeddings ?? spec.defaultMaxPositions,
    initializerRange: raw.initializer_range ?? 0.02,
    bosTokenId: raw.bos_token_id ?? null,
    eosTokenIds: eos == null ? [] : Array.isArray(eos) ? eos : [eos],
    padTokenId: raw.pad_token_id ?? null,
  };
}

function parseRopeScaling(raw: z.infer<typeof ropeScalingSchema> | null, source: string): RopeScaling | null {
  if (raw === null) return null;
  const kind = raw.rope_type ?? raw.type ?? 'default';
  const need = (field: keyof typeof raw): number => {
    const value = raw[field];
    if (typeof value !== 'number') {
      throw new ModelConfigError(`${source}: rope_scaling of type "${kind}" needs a numeric "${field}"`);
    }
    return value;
  };
  switch (kind) {
    case 'default':
      return null;
    case 'linear':
      return { type: 'linear', factor: need('factor') };
    case 'llama3':
      return {
        type: 'llama3',
        factor: need('factor'),
        lowFreqFactor: need('low_freq_factor'),
        highFreqFactor: need('high_freq_factor'),
        originalMaxPositionEmbeddings: need('original_max_position_embeddings'),
      };
    default:
      throw new ModelConfigError(
        `${source}: rope_scaling type "${kind}" is not supported; supported: default, linear, llama3`,
      );
  }
}

/** The config.json a Hugging Face `save_pretrained` would write for this config (used by `model init`). */
export function toHfConfigJson(config: ModelConfig, torchDtype: 'float32' | 'bfloat16' | 'float16'): object {
  const spec = architectures[config.architecture];
  const common = {
    architectures: [spec.hfClass],
    model_type: config.architecture,
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    // Written whenever it differs from hidden / heads, and always for Qwen3 (whose default is 128).
    ...(config.headDim === config.hiddenSize / config.numHeads && !spec.qkNorm
      ? {}
      : { head_dim: config.headDim }),
    hidden_act: 'silu',
    max_position_embeddings: config.maxPositionEmbeddings,
    initializer_range: config.initializerRange,
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: ropeScalingJson(config.ropeScaling),
    tie_word_embeddings: config.tieWordEmbeddings,
    attention_dropout: 0.0,
    bos_token_id: config.bosTokenId,
    eos_token_id: config.eosTokenIds.length === 1 ? config.eosTokenIds[0] : [...config.eosTokenIds],
    pad_token_id: config.padTokenId,
    torch_dtype: torchDtype,
    use_cache: true,
  };
  switch (config.architecture) {
    case 'llama':
      return {
        ...common,
        attention_bias: config.bias.q_proj,
        mlp_bias: config.bias.gate_proj,
        pretraining_tp: 1,
      };
    case 'qwen2':
      return {
        ...common,
        use_sliding_window: false,
        sliding_window: null,
        max_window_layers: config.numLayers,
      };
    case 'qwen3':
      return {
        ...common,
        attention_bias: config.bias.q_proj,
        use_sliding_window: false,
        sliding_window: null,
        max_window_layers: config.numLayers,
      };
  }
}

function ropeScalingJson(scaling: RopeScaling | null): object | null {
  if (scaling === null) return null;
  switch (scaling.type) {
    case 'linear':
      return { rope_type: 'linear', factor: scaling.factor };
    case 'llama3':
      return {
        rope_type: 'llama3',
        factor: scaling.factor,
        low_freq_factor: scaling.lowFreqFactor,
        high_freq_factor: scaling.highFreqFactor,
        original_max_position_embeddings: scaling.originalMaxPositionEmbeddings,
      };
  }
}
