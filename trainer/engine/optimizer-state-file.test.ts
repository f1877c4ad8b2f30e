// optimizer.safetensors: the engine-neutral format round-trips, and a format-1 file (tfjs variable
// names, transposed layout) reads back as the same moments under PEFT names in PEFT's layout.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSafetensors } from '../../model/safetensors.ts';
import {
  encodeOptimizerMoments,
  optimizerFile,
  peftKeyOfVariable,
  readOptimizerMoments,
  transpose,
} from './optimizer-state-file.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-optimizer-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('optimizer.safetensors', () => {
  it('names a tfjs variable by its PEFT key', () => {
    expect(peftKeyOfVariable('lora/3/train/layers.1.q_proj.lora_A')).toBe(
      'base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight',
    );
    expect(peftKeyOfVariable('lora/0/x/layers.0.down_proj.lora_B')).toBe(
      'base_model.model.model.layers.0.mlp.down_proj.lora_B.weight',
    );
    expect(peftKeyOfVariable('lora/0/x/layers.0.lm_head.lora_B')).toBeUndefined();
  });

  it('transposes [2, 3] row-major by hand', () => {
    // [[1, 2, 3], [4, 5, 6]]ᵀ = [[1, 4], [2, 5], [3, 6]]
    expect(Array.from(transpose(Float32Array.of(1, 2, 3, 4, 5, 6), 2, 3))).toEqual([1, 4, 2, 5, 3, 6]);
  });

  it('round-trips format 2', async () => {
    const key = 'base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight';
    const moments = new Map([
      [key, { shape: [3, 2], m: Float32Array.of(1, 2, 3, 4, 5, 6), v: Float32Array.of(6, 5, 4, 3, 2, 1) }],
    ]);
    await writeFile(join(dir, optimizerFile), encodeOptimizerMoments({ step: 7, moments }));
    const read = await readOptimizerMoments(dir);
    expect(read.step).toBe(7);
    expect(read.moments.get(key)).toEqual(moments.get(key));
  });

  it('reads format 1 (tfjs names, Aᵀ layout) as PEFT-keyed moments', async () => {
    const legacy = join(dir, 'legacy');
    await rm(legacy, { recursive: true, force: true });
    await mkdir(legacy);
    // Aᵀ [in 3, r 2] of layer 0's q_proj, as the tfjs runtime held it.
    const m = Float32Array.of(1, 2, 3, 4, 5, 6);
    const v = Float32Array.of(0.1, 0.2, 0.3, 0.4, 0.5, 0.6);
    await writeFile(
      join(legacy, optimizerFile),
      encodeSafetensors(
        new Map([
          ['m.0', { shape: [3, 2], data: m }],
          ['v.0', { shape: [3, 2], data: v }],
        ]),
        {
          metadata: {
            format: 'edgerl-adamw',
            step: '4',
            names: JSON.stringify(['lora/9/train/layers.0.q_proj.lora_A']),
          },
        },
      ),
    );
    const read = await readOptimizerMoments(legacy);
    expect(read.step).toBe(4);
    const moment = read.moments.get('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    expect(moment?.shape).toEqual([2, 3]);
    expect(Array.from(moment?.m ?? [])).toEqual([1, 3, 5, 2, 4, 6]);
    expect(Array.from(moment?.v ?? [])).toEqual(Array.from(transpose(v, 3, 2)));
  });
});
