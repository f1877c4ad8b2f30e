import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasQkNorm, parseHfConfig, toHfConfigJson } from './hf-config.ts';
import { fixtureDir } from '../test/support/model-fixtures.ts';

/** The fields of Qwen/Qwen2.5-0.5B-Instruct's config.json that the runtime reads. */
const qwen25 = {
  architectures: ['Qwen2ForCausalLM'],
  model_type: 'qwen2',
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  hidden_act: 'silu',
  max_position_embeddings: 32768,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  rope_scaling: null,
  tie_word_embeddings: true,
  use_sliding_window: false,
  sliding_window: 32768,
  bos_token_id: 151643,
  eos_token_id: 151645,
  torch_dtype: 'bfloat16',
};

describe('parseHfConfig', () => {
  it('reads a Qwen2.5 config: GQA, tied embeddings, q/k/v bias', () => {
    const config = parseHfConfig(qwen25);
    expect(config).toMatchObject({
      architecture: 'qwen2',
      numHeads: 14,
      numKvHeads: 2,
      headDim: 64, // 896 / 14
      tieWordEmbeddings: true,
      ropeTheta: 1e6,
      eosTokenIds: [151645],
    });
    expect(config.bias).toEqual({
      q_proj: true,
      k_proj: true,
      v_proj: true,
      o_proj: false,
      gate_proj: false,
      up_proj: false,
      down_proj: false,
    });
  });

  it('applies transformers defaults for Llama and reads llama3 rope scaling', () => {
    const config = parseHfConfig({
      model_type: 'llama',
      vocab_size: 100,
      hidden_size: 64,
      intermediate_size: 128,
      num_hidden_layers: 1,
      num_attention_heads: 4,
      eos_token_id: [1, 2],
      rope_scaling: {
        rope_type: 'llama3',
        factor: 8,
        low_freq_factor: 1,
        high_freq_factor: 4,
        original_max_position_embeddings: 8192,
      },
    });
    expect(config).toMatchObject({
      numKvHeads: 4, // defaults to num_attention_heads
      rmsNormEps: 1e-6,
      ropeTheta: 10000,
      tieWordEmbeddings: false,
      maxPositionEmbeddings: 2048,
      eosTokenIds: [1, 2],
      ropeScaling: {
        type: 'llama3',
        factor: 8,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositionEmbeddings: 8192,
      },
    });
    expect(Object.values(config.bias).some(Boolean)).toBe(false);
  });

  it('reads a Qwen3 config: head_dim 128 by default, per-head q/k norms, attention_bias on q/k/v/o only', () => {
    // The shape fields of Qwen/Qwen3-0.6B's config.json (real-presets.ts gives the sources).
    const qwen3 = {
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      vocab_size: 151936,
      hidden_size: 1024,
      intermediate_size: 3072,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      attention_bias: false,
      max_position_embeddings: 40960,
      rope_theta: 1000000,
      tie_word_embeddings: true,
    };
    const config = parseHfConfig(qwen3);
    expect(config).toMatchObject({ architecture: 'qwen3', headDim: 128, numHeads: 16, numKvHeads: 8 });
    expect(hasQkNorm(config)).toBe(true);
    expect(Object.values(config.bias).some(Boolean)).toBe(false);
    // Qwen3Config's head_dim defaults to 128, not hidden / heads (= 64 here); Llama's to hidden / heads.
    const { head_dim: _, ...withoutHeadDim } = qwen3;
    expect(parseHfConfig(withoutHeadDim).headDim).toBe(128);
    expect(parseHfConfig({ ...withoutHeadDim, model_type: 'llama' }).headDim).toBe(64);
    // Qwen3Attention puts attention_bias on all four attention projections; Qwen3MLP never has one.
    const biased = parseHfConfig({ ...qwen3, attention_bias: true, mlp_bias: true });
    expect(biased.bias).toEqual({
      q_proj: true,
      k_proj: true,
      v_proj: true,
      o_proj: true,
      gate_proj: false,
      up_proj: false,
      down_proj: false,
    });
    expect(hasQkNorm(parseHfConfig(qwen25))).toBe(false);
  });

  it('reads RoPE from rope_parameters, as transformers ≥ 5 writes it', () => {
    // Qwen2Config(rope_theta=1e6).to_json_string() in transformers 5.18 holds no rope_theta key.
    const { rope_theta: _, rope_scaling: __, ...rest } = qwen25;
    expect(
      parseHfConfig({ ...rest, rope_parameters: { rope_theta: 1000000.0, rope_type: 'default' } }),
    ).toMatchObject({ ropeTheta: 1e6, ropeScaling: null });
    expect(
      parseHfConfig({
        ...rest,
        rope_parameters: { rope_theta: 500000, rope_type: 'linear', factor: 2 },
      }),
    ).toMatchObject({ ropeTheta: 5e5, ropeScaling: { type: 'linear', factor: 2 } });
    expect(() =>
      parseHfConfig({ ...rest, rope_parameters: { rope_theta: 1e4, partial_rotary_factor: 0.5 } }),
    ).toThrow(/partial_rotary_factor 0.5 is not supported/);
  });

  it('survives a round trip through the config.json it writes', () => {
    for (const name of ['qwen2', 'llama', 'qwen3']) {
      const config = parseHfConfig(JSON.parse(readFileSync(join(fixtureDir(name), 'config.json'), 'utf8')));
      expect(parseHfConfig(toHfConfigJson(config, 'float32'))).toEqual(config);
    }
  });

  it('rejects what it cannot run, naming the field', () => {
    const base = { ...qwen25 };
    expect(() => parseHfConfig({ ...base, model_type: 'gpt2' })).toThrow(
      /model_type "gpt2" is not supported; supported: llama, qwen2/,
    );
    expect(() => parseHfConfig({ ...base, num_key_value_heads: 3 })).toThrow(
      /num_attention_heads \(14\) must be a multiple of num_key_value_heads \(3\)/,
    );
    expect(() => parseHfConfig({ ...base, use_sliding_window: true })).toThrow(/use_sliding_window/);
    expect(() => parseHfConfig({ ...base, hidden_act: 'gelu' })).toThrow(/hidden_act "gelu"/);
    expect(() => parseHfConfig({ ...base, hidden_size: 'big' })).toThrow(/hidden_size/);
    expect(() => parseHfConfig({ ...base, rope_scaling: { rope_type: 'yarn', factor: 4 } })).toThrow(
      /rope_scaling type "yarn"/,
    );
    expect(() => parseHfConfig({ ...base, quantization_config: { quant_method: 'awq' } })).toThrow(
      /quantized/,
    );
  });
});
