// PEFT's adapter format: exact key names, shapes, adapter_config.json fields, lossless round trips
// and clear errors for adapters this runtime (like vLLM) cannot apply.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projections } from './hf-config.ts';
import { parsePeftAdapterConfig, peftTensorName } from './peft-adapter.ts';
import { loadModel, type PolicyModel } from './policy-model.ts';
import { readSafetensorsFile, readSafetensorsHeader } from './read-safetensors-file.ts';
import { encodeSafetensors } from './safetensors.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { maxAbsDiff } from '../test/support/max-difference.ts';

const ids = [[5, 17, 42, 99, 3, 64]];

/** adapter_config.json as PEFT 0.13 `LoraConfig(r=4, lora_alpha=8, target_modules=[...], task_type="CAUSAL_LM")
 * .save_pretrained()` writes it (keys sorted), written out by hand from PEFT's LoraConfig fields. */
const peftConfig = {
  alpha_pattern: {},
  auto_mapping: null,
  base_model_name_or_path: 'Qwen/Qwen2.5-0.5B-Instruct',
  bias: 'none',
  fan_in_fan_out: false,
  inference_mode: true,
  init_lora_weights: true,
  layer_replication: null,
  layers_pattern: null,
  layers_to_transform: null,
  loftq_config: {},
  lora_alpha: 8,
  lora_dropout: 0,
  megatron_config: null,
  megatron_core: 'megatron.core',
  modules_to_save: null,
  peft_type: 'LORA',
  r: 4,
  rank_pattern: {},
  revision: null,
  target_modules: ['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj'],
  task_type: 'CAUSAL_LM',
  use_dora: false,
  use_rslora: false,
};

describe('PEFT adapter files', () => {
  let model: PolicyModel;
  let scratch: string;
  beforeAll(async () => {
    await useBackend('wasm');
    model = await loadModel(fixtureDir('qwen2'));
    scratch = await mkdtemp(join(tmpdir(), 'edgerl-peft-'));
  });
  afterAll(async () => {
    model.dispose();
    await rm(scratch, { recursive: true, force: true });
  });

  it('uses PEFT key names', () => {
    expect(peftTensorName(0, 'q_proj', 'A')).toBe(
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
    );
    expect(peftTensorName(11, 'down_proj', 'B')).toBe(
      'base_model.model.model.layers.11.mlp.down_proj.lora_B.weight',
    );
  });

  it('writes adapter_config.json with the fields and order PEFT writes, and A [r, in] / B [out, r]', async () => {
    model.addAdapter('save', { r: 4, alpha: 8, targets: [...projections] }, { seed: 1 });
    const dir = join(scratch, 'save');
    await model.saveAdapter('save', dir, { baseModelNameOrPath: 'Qwen/Qwen2.5-0.5B-Instruct' });
    const text = await readFile(join(dir, 'adapter_config.json'), 'utf8');
    expect(JSON.parse(text)).toEqual(peftConfig);
    expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(peftConfig).sort());
    const header = await readSafetensorsHeader(join(dir, 'adapter_model.safetensors'));
    expect(header.metadata).toEqual({ format: 'pt' });
    expect(header.entries.size).toBe(2 * 7 * 2); // 2 layers × 7 projections × (A, B)
    // Qwen2 micro: hidden 32, 4 heads × 8, 2 kv heads × 8 = 16, intermediate 80.
    expect(
      header.entries.get('base_model.model.model.layers.1.self_attn.k_proj.lora_A.weight')?.shape,
    ).toEqual([4, 32]);
    expect(
      header.entries.get('base_model.model.model.layers.1.self_attn.k_proj.lora_B.weight')?.shape,
    ).toEqual([16, 4]);
    expect(header.entries.get('base_model.model.model.layers.0.mlp.down_proj.lora_A.weight')?.shape).toEqual([
      4, 80,
    ]);
    expect(header.entries.get('base_model.model.model.layers.0.mlp.down_proj.lora_B.weight')).toMatchObject({
      dtype: 'F32',
      shape: [32, 4],
    });
    // A is PEFT's Kaiming-uniform init: |a| ≤ 1/√in (in = 32 for q_proj); B starts at zero.
    const tensors = await readSafetensorsFile(join(dir, 'adapter_model.safetensors'));
    const a = tensors.get(peftTensorName(0, 'q_proj', 'A'))?.data as Float32Array;
    expect(Math.max(...Array.from(a, Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(32));
    expect(Math.max(...Array.from(a, Math.abs))).toBeGreaterThan(0.5 / Math.sqrt(32));
    expect(tensors.get(peftTensorName(0, 'q_proj', 'B'))?.data.every((v) => v === 0)).toBe(true);
    model.removeAdapter('save');
  });

  it('loads what it saves: identical logits (F32) and BF16-rounded weights (BF16)', async () => {
    await model.loadAdapter('fixture', join(fixtureDir('qwen2'), 'adapter'));
    const dir32 = join(scratch, 'f32');
    const dir16 = join(scratch, 'bf16');
    await model.saveAdapter('fixture', dir32);
    await model.saveAdapter('fixture', dir16, { dtype: 'BF16' });
    await model.loadAdapter('again', dir32);
    await model.loadAdapter('half', dir16);
    const want = await model.forwardLogits(ids, { adapter: 'fixture' }).data();
    expect(maxAbsDiff(await model.forwardLogits(ids, { adapter: 'again' }).data(), want)).toBe(0);
    // BF16 keeps ~3 significant digits of each weight: the logits move, but only a little.
    const half = maxAbsDiff(await model.forwardLogits(ids, { adapter: 'half' }).data(), want);
    expect(half).toBeGreaterThan(0);
    expect(half).toBeLessThan(0.1);
    const original = await readSafetensorsFile(
      join(fixtureDir('qwen2'), 'adapter', 'adapter_model.safetensors'),
    );
    const resaved = await readSafetensorsFile(join(dir32, 'adapter_model.safetensors'));
    for (const [name, tensor] of original)
      expect(Array.from(resaved.get(name)?.data ?? [])).toEqual(Array.from(tensor.data));
    for (const name of ['fixture', 'again', 'half']) model.removeAdapter(name);
  });

  it('accepts PEFT target_modules spellings: suffixes and "all-linear"', () => {
    const base = { peft_type: 'LORA', r: 2, lora_alpha: 4 };
    expect(
      parsePeftAdapterConfig({ ...base, target_modules: ['self_attn.q_proj', 'v_proj'] }, 'x').targets,
    ).toEqual(['q_proj', 'v_proj']);
    expect(parsePeftAdapterConfig({ ...base, target_modules: 'all-linear' }, 'x').targets).toEqual([
      ...projections,
    ]);
    expect(
      parsePeftAdapterConfig({ ...base, target_modules: ['q_proj'], use_rslora: true }, 'x'),
    ).toMatchObject({ useRslora: true, alpha: 4, r: 2 });
  });

  it('rejects adapters it cannot apply, naming why', async () => {
    const base = { peft_type: 'LORA', r: 2, lora_alpha: 4, target_modules: ['q_proj'] };
    expect(() => parsePeftAdapterConfig({ ...base, use_dora: true }, 'c.json')).toThrow(
      /c\.json: use_dora=true \(DoRA\) is not supported/,
    );
    expect(() =>
      parsePeftAdapterConfig({ ...base, target_modules: ['q_proj', 'lm_head'] }, 'c.json'),
    ).toThrow(/target_modules lm_head are not supported/);
    expect(() => parsePeftAdapterConfig({ ...base, modules_to_save: ['lm_head'] }, 'c.json')).toThrow(
      /modules_to_save is set/,
    );
    expect(() => parsePeftAdapterConfig({ ...base, peft_type: 'IA3' }, 'c.json')).toThrow(/only "LORA"/);
    expect(() => parsePeftAdapterConfig({ ...base, bias: 'all' }, 'c.json')).toThrow(/bias "all"/);

    // A tensor missing from the file, and one with the wrong rank.
    const broken = join(scratch, 'broken');
    await cp(join(fixtureDir('qwen2'), 'adapter'), broken, { recursive: true });
    const tensors = await readSafetensorsFile(join(broken, 'adapter_model.safetensors'));
    tensors.delete(peftTensorName(1, 'up_proj', 'B'));
    tensors.set(peftTensorName(0, 'v_proj', 'A'), { shape: [3, 32], data: new Float32Array(96) });
    await writeFile(join(broken, 'adapter_model.safetensors'), encodeSafetensors(tensors));
    await expect(model.loadAdapter('broken', broken)).rejects.toThrow(
      /missing tensors: base_model\.model\.model\.layers\.1\.mlp\.up_proj\.lora_B\.weight; wrong shapes: base_model\.model\.model\.layers\.0\.self_attn\.v_proj\.lora_A\.weight is \[3, 32\], expected \[4, 32\]/,
    );
    // The llama fixture's adapter: its v_proj B is [8, 4] (one kv head), this model needs [16, 4].
    await expect(model.loadAdapter('other', join(fixtureDir('llama'), 'adapter'))).rejects.toThrow(
      /wrong shapes: base_model\.model\.model\.layers\.0\.self_attn\.v_proj\.lora_B\.weight is \[8, 4\], expected \[16, 4\]/,
    );
    // Only the pickle format: say so.
    await rm(join(broken, 'adapter_model.safetensors'));
    await writeFile(join(broken, 'adapter_model.bin'), 'pickle');
    await expect(model.loadAdapter('broken', broken)).rejects.toThrow(
      /no adapter_model\.safetensors \(adapter_model\.bin is a pickle/,
    );
    expect(model.adapterNames()).toEqual([]);
  });

  it('names adapter_config.json when it is not valid JSON', async () => {
    const bad = join(scratch, 'bad-config');
    await cp(join(fixtureDir('qwen2'), 'adapter'), bad, { recursive: true });
    await writeFile(join(bad, 'adapter_config.json'), '{"peft_type": "LORA", ');
    await expect(model.loadAdapter('bad', bad)).rejects.toThrow(
      `${join(bad, 'adapter_config.json')}: not valid JSON`,
    );
    expect(model.adapterNames()).toEqual([]);
  });
});
