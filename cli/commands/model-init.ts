// `edgerl model init --out DIR`: writes a complete Hugging Face model directory with seeded random
// weights (config.json, generation_config.json, model.safetensors, tokenizer.json and
// tokenizer_config.json): a tiny one with a byte-level vocabulary for tests, demos and local training,
// or a real Qwen model's exact configuration and tokenizer (no weights are downloaded).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Architecture, architectures, isArchitecture } from '../../model/hf-config.ts';
import { isModelPreset, modelPresets } from '../../model/init-model.ts';
import { isRealPreset, realPresets } from '../../model/real-presets.ts';
import type { SafetensorsDtype } from '../../model/safetensors.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';

const dtypes = { float32: 'F32', bfloat16: 'BF16', float16: 'F16' } as const satisfies Record<
  string,
  SafetensorsDtype
>;

const presetNames = [...Object.keys(modelPresets), ...Object.keys(realPresets)];

const realPresetLines = Object.entries(realPresets)
  .map(([name, spec]) => `                     ${name.padEnd(13)} ${spec.hubId} (${spec.published})`)
  .join('\n');

export const modelInitCommand = defineCommand({
  usage: `Usage: edgerl model init --out DIR [options]

Writes config.json, generation_config.json, model.safetensors, tokenizer.json and
tokenizer_config.json: a randomly initialised model loadable by edgerl, Hugging Face transformers
and vLLM. tiny and small have a small byte-level vocabulary plus ChatML special tokens; the Qwen
presets have the real model's config.json and Qwen's tokenizer and chat template.

Options:
  --out DIR          directory to write (created if missing)
  --preset NAME      one of (default tiny):
                     tiny          hidden 64, 2 layers
                     small         hidden 256, 4 layers
${realPresetLines}
  --arch NAME        ${Object.keys(architectures).join(' | ')}, for tiny and small (default qwen2);
                     a Qwen preset's architecture is its own
  --seed N           seed of the random weights (default 0)
  --dtype NAME       ${Object.keys(dtypes).join(' | ')} (default float32)
  --force            overwrite an existing model directory

The Qwen presets need the repository's dev install (npm ci) for Qwen's tokenizer files, and
disk: qwen2.5-7b is 15 GB in bfloat16, 30 GB in float32.`,
  options: {
    out: { type: 'string' },
    preset: { type: 'string' },
    arch: { type: 'string' },
    seed: { type: 'string' },
    dtype: { type: 'string' },
    force: { type: 'boolean' },
  },
  async run({ values, stdout }) {
    const { initModelDir, presetArchitecture } = await import('../../model/init-model-dir.ts');
    const out = stringFlag(values, 'out');
    if (!out) throw new UsageError('--out DIR is required');
    const preset = stringFlag(values, 'preset') ?? 'tiny';
    if (!isModelPreset(preset) && !isRealPreset(preset))
      throw new UsageError(`--preset must be one of ${presetNames.join(', ')}, got "${preset}"`);
    const requested = stringFlag(values, 'arch');
    if (requested !== undefined && !isArchitecture(requested))
      throw new UsageError(
        `--arch must be one of ${Object.keys(architectures).join(', ')}, got "${requested}"`,
      );
    if (isRealPreset(preset) && requested !== undefined) {
      const own = presetArchitecture(preset);
      if (requested !== own)
        throw new UsageError(
          `--preset ${preset} is ${realPresets[preset].hubId}, a ${own} model: drop --arch ${requested} (--arch chooses the architecture of tiny and small)`,
        );
    }
    const architecture = presetArchitecture(preset, requested as Architecture | undefined);
    const dtypeName = stringFlag(values, 'dtype') ?? 'float32';
    if (!Object.hasOwn(dtypes, dtypeName))
      throw new UsageError(`--dtype must be one of ${Object.keys(dtypes).join(', ')}, got "${dtypeName}"`);
    const seed = intFlag(values, 'seed', 0, { min: 0, max: 2 ** 31 - 1 });
    if (existsSync(join(out, 'config.json')) && values.force !== true) {
      throw new UsageError(`${out} already holds a model (config.json); pass --force to overwrite it`);
    }
    const { files, parameters } = await initModelDir(out, {
      preset,
      architecture,
      seed,
      dtype: dtypes[dtypeName as keyof typeof dtypes],
    });
    stdout.write(
      `wrote ${preset} ${architecture} model (${parameters.toLocaleString('en-US')} parameters, seed ${seed}) to ${out}: ${files.join(', ')}\n`,
    );
    return 0;
  },
});
