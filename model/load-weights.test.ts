import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseHfConfig } from './hf-config.ts';
import { loadCheckpointWeights } from './load-weights.ts';
import { readSafetensorsFile } from './read-safetensors-file.ts';
import { encodeSafetensors, type HostTensor } from './safetensors.ts';
import { fixtureDir } from '../test/support/model-fixtures.ts';

async function fixtureConfig(name: string) {
  return parseHfConfig(JSON.parse(await readFile(join(fixtureDir(name), 'config.json'), 'utf8')));
}

/** Copies the qwen2 fixture and rewrites its weights through `edit`. */
async function editedQwen2(edit: (tensors: Map<string, HostTensor>) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'edgerl-ckpt-'));
  await cp(fixtureDir('qwen2'), dir, { recursive: true });
  const tensors = await readSafetensorsFile(join(dir, 'model.safetensors'));
  edit(tensors);
  await writeFile(join(dir, 'model.safetensors'), encodeSafetensors(tensors, { dtype: 'BF16' }));
  return dir;
}

describe('loadCheckpointWeights', () => {
  it('loads a BF16 single file and an F16 sharded checkpoint, every tensor the config needs', async () => {
    const qwen = await loadCheckpointWeights(fixtureDir('qwen2'), await fixtureConfig('qwen2'));
    // 1 embedding + 2 layers × (7 weights + 3 biases + 2 norms) + final norm; tied, so no lm_head.
    expect(qwen.size).toBe(1 + 2 * 12 + 1);
    expect(qwen.get('model.layers.1.self_attn.k_proj.weight')?.shape).toEqual([16, 32]); // 2 kv heads × 8
    const llama = await loadCheckpointWeights(fixtureDir('llama'), await fixtureConfig('llama'));
    // 1 + 2 × (7 weights + 4 attention biases + 2 norms) + norm + lm_head, across 2 shards.
    expect(llama.size).toBe(1 + 2 * 13 + 2);
    expect(llama.get('lm_head.weight')?.shape).toEqual([128, 32]);
  });

  it('names missing, unexpected and mis-shaped tensors', async () => {
    const config = await fixtureConfig('qwen2');
    const missing = await editedQwen2((t) => {
      t.delete('model.layers.1.mlp.up_proj.weight');
      t.delete('model.norm.weight');
    });
    await expect(loadCheckpointWeights(missing, config)).rejects.toThrow(
      /missing tensors: model\.layers\.1\.mlp\.up_proj\.weight, model\.norm\.weight/,
    );
    const extra = await editedQwen2((t) => {
      t.set('model.layers.0.mlp.extra.weight', { shape: [2], data: new Float32Array(2) });
      // Old Llama exports carry rotary buffers; transformers ignores them and so do we.
      t.set('model.layers.0.self_attn.rotary_emb.inv_freq', { shape: [4], data: new Float32Array(4) });
    });
    await expect(loadCheckpointWeights(extra, config)).rejects.toThrow(
      /unexpected tensors: model\.layers\.0\.mlp\.extra\.weight$/,
    );
    const shaped = await editedQwen2((t) => {
      t.set('model.norm.weight', { shape: [31], data: new Float32Array(31) });
    });
    await expect(loadCheckpointWeights(shaped, config)).rejects.toThrow(
      /model\.norm\.weight is \[31\], config needs \[32\]/,
    );
  });

  it('says what is missing when there is no safetensors file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'edgerl-empty-'));
    await writeFile(join(dir, 'pytorch_model.bin'), 'x');
    await expect(loadCheckpointWeights(dir, await fixtureConfig('qwen2'))).rejects.toThrow(
      /no model\.safetensors or model\.safetensors\.index\.json \(pytorch_model\.bin is a pickle/,
    );
  });
});
