// `edgerl model init --out DIR`: writes a complete, tiny Hugging Face model directory (config.json,
// generation_config.json, model.safetensors with seeded random weights, tokenizer.json and
// tokenizer_config.json with a tool-calling ChatML template) for tests, demos and local training.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Architecture, architectures, isArchitecture } from '../../model/hf-config.ts';
import { initModelDir } from '../../model/init-model-dir.ts';
import { isModelPreset, type ModelPreset, modelPresets } from '../../model/init-model.ts';
import type { SafetensorsDtype } from '../../model/safetensors.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';

const dtypes = { float32: 'F32', bfloat16: 'BF16', float16: 'F16' } as const satisfies Record<
  string,
  SafetensorsDtype
>;

export const modelInitCommand = defineCommand({
  usage: `Usage: edgerl model init --out DIR [options]

Writes config.json, generation_config.json, model.safetensors, tokenizer.json and
tokenizer_config.json: a randomly initialised model with a small byte-level vocabulary plus
ChatML special tokens, loadable by edgerl, Hugging Face transformers and vLLM.

Options:
  --out DIR          directory to write (created if missing)
  --preset NAME      ${Object.keys(modelPresets).join(' | ')} (default tiny: hidden 64, 2 layers; small: hidden 256, 4 layers)
  --arch NAME        ${Object.keys(architectures).join(' | ')} (default qwen2)
  --seed N           seed of the random weights (default 0)
  --dtype NAME       ${Object.keys(dtypes).join(' | ')} (default float32)
  --force            overwrite an existing model directory`,
  options: {
    out: { type: 'string' },
    preset: { type: 'string' },
    arch: { type: 'string' },
    seed: { type: 'string' },
    dtype: { type: 'string' },
    force: { type: 'boolean' },
  },
  async run({ values, stdout }) {
    const out = stringFlag(values, 'out');
    if (!out) throw new UsageError('--out DIR is required');
    const preset = stringFlag(values, 'preset') ?? 'tiny';
    if (!isModelPreset(preset))
      throw new UsageError(
        `--preset must be one of ${Object.keys(modelPresets).join(', ')}, got "${preset}"`,
      );
    const arch = stringFlag(values, 'arch') ?? 'qwen2';
    if (!isArchitecture(arch))
      throw new UsageError(`--arch must be one of ${Object.keys(architectures).join(', ')}, got "${arch}"`);
    const dtypeName = stringFlag(values, 'dtype') ?? 'float32';
    if (!Object.hasOwn(dtypes, dtypeName))
      throw new UsageError(`--dtype must be one of ${Object.keys(dtypes).join(', ')}, got "${dtypeName}"`);
    const seed = intFlag(values, 'seed', 0, { min: 0, max: 2 ** 31 - 1 });
    if (existsSync(join(out, 'config.json')) && values.force !== true) {
      throw new UsageError(`${out} already holds a model (config.json); pass --force to overwrite it`);
    }
    const { files, parameters } = await initModelDir(out, {
      preset: preset as ModelPreset,
      architecture: arch as Architecture,
      seed,
      dtype: dtypes[dtypeName as keyof typeof dtypes],
    });
    stdout.write(
      `wrote ${preset} ${arch} model (${parameters.toLocaleString('en-US')} parameters, seed ${seed}) to ${out}: ${files.join(', ')}\n`,
    );
    return 0;
  },
});
