// `model init`'s directory: a loadable model whose config, weights and tokenizer agree.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHfConfig } from './hf-config.ts';
import { initModelDir } from './init-model-dir.ts';
import { parameterCount, presetConfig, randomWeights } from './init-model.ts';
import { encodeSafetensors } from './safetensors.ts';
import { loadModel } from './policy-model.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { loadTokenizer } from './tokenizer/load-tokenizer.ts';
import { generate } from '../test/support/generate.ts';

describe('model init', () => {
  let dir: string;
  beforeAll(async () => {
    await useBackend('wasm');
    dir = await mkdtemp(join(tmpdir(), 'edgerl-init-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('sizes the tiny preset as computed by hand', () => {
    const config = presetConfig('tiny', 'qwen2', {
      vocabSize: 512,
      bosTokenId: null,
      eosTokenIds: [502],
      padTokenId: 500,
    });
    // embed 512·64 = 32,768; per layer q 64·64 + 64, k and v 32·64 + 32 each, o 64·64,
    // gate/up/down 3·176·64 = 33,792, two norms 128 → 46,336; ×2 layers; final norm 64; tied head.
    expect(parameterCount(config)).toBe(32768 + 2 * 46336 + 64);
    expect(
      parameterCount(
        presetConfig('tiny', 'llama', {
          vocabSize: 512,
          bosTokenId: null,
          eosTokenIds: [],
          padTokenId: null,
        }),
      ),
    ).toBe(
      32768 + 2 * (46336 - 128) + 64 + 32768, // no q/k/v bias, separate lm_head
    );
  });

  it('sizes the tiny Qwen3 preset as computed by hand (head_dim 2·64/4 = 32, q/k norms, no bias)', () => {
    const config = presetConfig('tiny', 'qwen3', {
      vocabSize: 512,
      bosTokenId: null,
      eosTokenIds: [502],
      padTokenId: 500,
    });
    expect(config.headDim).toBe(32);
    // per layer: q 128·64, k and v 64·64 each, o 64·128 (no biases), gate/up/down 33,792, two layer
    // norms 128, q and k norms 32 each → 58,432; × 2 layers; embed 32,768; final norm 64; tied head.
    expect(parameterCount(config)).toBe(32768 + 2 * (8192 + 2 * 4096 + 8192 + 33792 + 128 + 64) + 64);
  });

  it('initialises like transformers: N(0, 0.02²) weights, unit norms, zero biases, zero padding row', () => {
    const config = presetConfig('tiny', 'qwen2', {
      vocabSize: 512,
      bosTokenId: null,
      eosTokenIds: [502],
      padTokenId: 500,
    });
    const weights = randomWeights(config, 9);
    const embed = weights.get('model.embed_tokens.weight')?.data as Float32Array;
    const rows = embed.filter((_, i) => Math.floor(i / 64) !== 500);
    const std = Math.sqrt(rows.reduce((s, v) => s + v * v, 0) / rows.length);
    expect(Math.abs(std - 0.02)).toBeLessThan(0.0005); // 32,704 samples: relative error of the std ≈ 0.4 %
    expect(embed.subarray(500 * 64, 501 * 64).every((v) => v === 0)).toBe(true);
    expect(weights.get('model.layers.0.input_layernorm.weight')?.data.every((v) => v === 1)).toBe(true);
    expect(weights.get('model.layers.1.self_attn.q_proj.bias')?.data.every((v) => v === 0)).toBe(true);
    expect(randomWeights(config, 9).get('model.layers.1.mlp.up_proj.weight')?.data).toEqual(
      weights.get('model.layers.1.mlp.up_proj.weight')?.data,
    );
  });

  it('scales only the embedding (and an untied lm_head) with embeddingStd, leaving the rest as before', () => {
    const vocabulary = { vocabSize: 512, bosTokenId: null, eosTokenIds: [502], padTokenId: 500 };
    for (const architecture of ['qwen2', 'llama'] as const) {
      const config = presetConfig('tiny', architecture, vocabulary);
      const plain = randomWeights(config, 9);
      const wide = randomWeights(config, 9, { embeddingStd: 0.2 });
      const scaled = ['model.embed_tokens.weight', ...(architecture === 'llama' ? ['lm_head.weight'] : [])];
      for (const [name, tensor] of wide) {
        const before = plain.get(name)?.data as Float32Array;
        if (!scaled.includes(name)) {
          expect(tensor.data, name).toEqual(before);
          continue;
        }
        // Same normal draws, so each value is the 0.02 one times 0.2 / 0.02 = 10 (float32 rounding).
        let worst = 0;
        tensor.data.forEach((value, i) => {
          worst = Math.max(worst, Math.abs(value - 10 * (before[i] as number)) / (Math.abs(value) + 1e-9));
        });
        expect(worst, name).toBeLessThan(1e-6);
        expect(tensor.data.some((value) => value !== 0)).toBe(true);
      }
    }
    const config = presetConfig('tiny', 'qwen2', vocabulary);
    expect(() => randomWeights(config, 9, { embeddingStd: 0 })).toThrow(/embeddingStd must be a positive/);
  });

  it('writes a directory that the model runtime and the tokenizer both load', async () => {
    const { files, parameters } = await initModelDir(dir, {
      preset: 'tiny',
      architecture: 'qwen2',
      seed: 1,
      dtype: 'BF16',
    });
    expect(files).toEqual([
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const configJson = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'));
    expect(configJson).toMatchObject({
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      torch_dtype: 'bfloat16',
      hidden_size: 64,
    });
    const config = parseHfConfig(configJson);
    expect(parameters).toBe(parameterCount(config));
    const tokenizer = await loadTokenizer(dir);
    const eos = tokenizer.tokenToId('<|im_end|>');
    expect(config.eosTokenIds).toContain(eos);
    expect(config.padTokenId).toBe(tokenizer.tokenToId('<|endoftext|>'));
    const model = await loadModel(dir);
    const prompt = tokenizer.encode('Hello');
    expect(prompt.every((id) => id < config.vocabSize)).toBe(true);
    const [generation] = await generate(model, [prompt], { maxTokens: 4, seed: 1 });
    expect(generation?.tokenIds.length).toBeGreaterThan(0);
    expect(generation?.tokenIds.every((id) => id >= 0 && id < config.vocabSize)).toBe(true);
    model.dispose();
  });

  it('streams the tiny Qwen3 preset to disk in chunks, byte for byte the in-memory init, and loads it', async () => {
    const target = join(dir, 'qwen3');
    // 48-value chunks: the padding row (zeroed) straddles a chunk boundary, and so do most tensors.
    const { files, parameters } = await initModelDir(target, {
      preset: 'tiny',
      architecture: 'qwen3',
      seed: 4,
      dtype: 'BF16',
      chunkElements: 48,
    });
    expect(files).toContain('model.safetensors');
    const configJson = JSON.parse(await readFile(join(target, 'config.json'), 'utf8'));
    expect(configJson).toMatchObject({
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      head_dim: 32,
      attention_bias: false,
    });
    const config = parseHfConfig(configJson);
    expect(parameters).toBe(parameterCount(config));
    const padRow = (config.padTokenId as number) * config.hiddenSize;
    expect(Math.floor(padRow / 48)).not.toBe(Math.floor((padRow + config.hiddenSize - 1) / 48));
    const written = new Uint8Array(await readFile(join(target, 'model.safetensors')));
    expect(written).toEqual(encodeSafetensors(randomWeights(config, 4), { dtype: 'BF16' }));
    const model = await loadModel(target);
    const tokenizer = await loadTokenizer(target);
    const [generation] = await generate(model, [tokenizer.encode('Hello')], { maxTokens: 4, seed: 1 });
    expect(generation?.tokenIds.length).toBeGreaterThan(0);
    model.dispose();
  });

  it('loads the committed fixtures too (a different shape than the presets)', async () => {
    const model = await loadModel(fixtureDir('llama'));
    expect(model.config).toMatchObject({ architecture: 'llama', numKvHeads: 1, tieWordEmbeddings: false });
    model.dispose();
  });
});
