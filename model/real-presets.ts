// The configurations of real Qwen models, for `edgerl model init --preset qwen2.5-0.5b` and the like:
// each preset is the model's config.json as published on the Hugging Face Hub (so transformers and
// vLLM build exactly that model) and its tokenizer family; the weights stay random. Leaves out the
// weights themselves (nothing is downloaded) and the sampling defaults of generation_config.json.
import { type ModelConfig, parseHfConfig } from './hf-config.ts';
import type { QwenTokenizerFamily } from './tokenizer/qwen-tokenizer-files.ts';

export type RealPreset = 'qwen2.5-0.5b' | 'qwen2.5-1.5b' | 'qwen2.5-7b' | 'qwen3-0.6b';

interface RealPresetSpec {
  /** The Hub repository whose config.json this is. */
  readonly hubId: string;
  readonly tokenizer: QwenTokenizerFamily;
  /** config.json as published, less `torch_dtype` (set to the chosen dtype when written). */
  readonly config: Readonly<Record<string, unknown>>;
  /** The parameter count as the model card states it. */
  readonly published: string;
}

// Shared by every Qwen2.5 and Qwen3 preset: token ids (151643 <|endoftext|> is bos and pad, 151645
// <|im_end|> ends a chat turn), RoPE θ, RMSNorm ε, init range, SwiGLU, no sliding window. Every config
// below carries these fields; `sliding_window` is written null, as transformers stores it when
// use_sliding_window is false (some of the Hub's Qwen2.5 files hold a length there, unused).
// `transformers_version` is the published file's; without one, transformers ≥ 5 warns that a local
// tokenizer may carry an old Mistral pre-tokenizer regex (tokenization_utils_tokenizers.py).
const qwenCommon = {
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  hidden_act: 'silu',
  initializer_range: 0.02,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: null,
  use_cache: true,
  use_sliding_window: false,
} as const;

/**
 * Sources (the search corpus held copies of the Hub files, each naming the repository it came from;
 * every shape, RoPE, norm and token-id field below agrees with them):
 * - Qwen/Qwen2.5-0.5B-Instruct: huggingface.co/Jonathanmann/qwen-sms-3400/blob/main/config.json
 *   (`_name_or_path: Qwen/Qwen2.5-0.5B-Instruct`); 0.49B parameters, 0.36B non-embedding, 24 layers,
 *   14 / 2 heads: the model card (github.com/Abandon-ht/LLM-tutorial docs/source/model_pages/
 *   qwen2.5-0.5b-instruct.rst quotes it).
 * - Qwen/Qwen2.5-1.5B-Instruct: huggingface.co/onnx-community/Qwen2.5-1.5B-Instruct config.json
 *   (`_name_or_path: Qwen/Qwen2.5-1.5B-Instruct`) and huggingface.co/laampt/Qwen-1.5B-GRPO config.json.
 * - Qwen/Qwen2.5-7B-Instruct: huggingface.co/yongsen-teo/qwen25 config.json and huggingface.co/
 *   CarbonLover/krx_qwen2.5_it_test config.json (both `_name_or_path: Qwen/Qwen2.5-7B-Instruct`).
 *   Its vocab_size is 152064, not the 151936 of the smaller ones; its lm_head is separate.
 * - Qwen/Qwen3-0.6B: huggingface.co/TensorStack/TextEncoder Qwen-3-06B/config.json (a copy with no
 *   `_name_or_path`, written by transformers 4.51.0 as the release was); head_dim 128 with 16 heads
 *   makes q_proj 2048 wide on a 1024 hidden.
 * - transformers_version 4.43.1 for Qwen2.5: huggingface.co/TheBlueObserver/Qwen2.5-1.5B-Instruct
 *   config.json (a mirror of the release files); the re-saved copies above carry their own versions.
 */
export const realPresets = {
  'qwen2.5-0.5b': {
    hubId: 'Qwen/Qwen2.5-0.5B-Instruct',
    tokenizer: 'qwen2.5',
    published: '0.49B',
    config: {
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      ...qwenCommon,
      hidden_size: 896,
      intermediate_size: 4864,
      max_position_embeddings: 32768,
      max_window_layers: 21,
      num_attention_heads: 14,
      num_hidden_layers: 24,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      vocab_size: 151936,
      transformers_version: '4.43.1',
    },
  },
  'qwen2.5-1.5b': {
    hubId: 'Qwen/Qwen2.5-1.5B-Instruct',
    tokenizer: 'qwen2.5',
    published: '1.54B',
    config: {
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      ...qwenCommon,
      hidden_size: 1536,
      intermediate_size: 8960,
      max_position_embeddings: 32768,
      max_window_layers: 21,
      num_attention_heads: 12,
      num_hidden_layers: 28,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
      vocab_size: 151936,
      transformers_version: '4.43.1',
    },
  },
  'qwen2.5-7b': {
    hubId: 'Qwen/Qwen2.5-7B-Instruct',
    tokenizer: 'qwen2.5',
    published: '7.61B',
    config: {
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      ...qwenCommon,
      hidden_size: 3584,
      intermediate_size: 18944,
      max_position_embeddings: 32768,
      max_window_layers: 28,
      num_attention_heads: 28,
      num_hidden_layers: 28,
      num_key_value_heads: 4,
      tie_word_embeddings: false,
      vocab_size: 152064,
      transformers_version: '4.43.1',
    },
  },
  'qwen3-0.6b': {
    hubId: 'Qwen/Qwen3-0.6B',
    tokenizer: 'qwen3',
    published: '0.6B',
    config: {
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      ...qwenCommon,
      attention_bias: false,
      head_dim: 128,
      hidden_size: 1024,
      intermediate_size: 3072,
      max_position_embeddings: 40960,
      max_window_layers: 28,
      num_attention_heads: 16,
      num_hidden_layers: 28,
      num_key_value_heads: 8,
      rope_scaling: null,
      tie_word_embeddings: true,
      vocab_size: 151936,
      transformers_version: '4.51.0',
    },
  },
} satisfies Record<RealPreset, RealPresetSpec>;

export function isRealPreset(value: string): value is RealPreset {
  return Object.hasOwn(realPresets, value);
}

/** The runtime's view of the preset, through the same parser a loaded config.json goes through. */
export function realPresetConfig(preset: RealPreset): ModelConfig {
  return parseHfConfig(realPresets[preset].config, `${realPresets[preset].hubId} config.json`);
}

/** config.json to write: the published one, with `torch_dtype` set to the dtype of the weights. */
export function realPresetConfigJson(
  preset: RealPreset,
  torchDtype: 'float32' | 'bfloat16' | 'float16',
): Record<string, unknown> {
  const { config } = realPresets[preset];
  return Object.fromEntries(
    Object.entries({ ...config, torch_dtype: torchDtype }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** generation_config.json's token ids as published (eos: <|im_end|> then <|endoftext|>, pad
 * <|endoftext|>); the sampling defaults (temperature, top_p, …) are left out. */
export function realPresetGenerationConfig(): object {
  return { bos_token_id: 151643, do_sample: true, eos_token_id: [151645, 151643], pad_token_id: 151643 };
}
