import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHfConfig, toHfConfigJson } from './hf-config.ts';
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

  it('survives a round trip through the config.json it writes', () => {
    for (const name of ['qwen2', 'llama']) {
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
