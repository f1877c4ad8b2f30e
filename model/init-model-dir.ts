// `edgerl model init`'s work: a complete Hugging Face model directory with seeded random weights —
// config.json, generation_config.json, model.safetensors (streamed to disk, so the 0.5B–7B presets
// never sit in memory) and a tokenizer: for tiny/small the tiny byte-level one with ChatML specials and
// a tool-calling chat template (./tokenizer/), for the real Qwen presets Qwen's own (real-presets.ts).
import { type Architecture, type ModelConfig, toHfConfigJson } from './hf-config.ts';
import { isModelPreset, type ModelPreset, presetConfig, randomInit } from './init-model.ts';
import {
  isRealPreset,
  type RealPreset,
  realPresetConfig,
  realPresetConfigJson,
  realPresetGenerationConfig,
  realPresets,
} from './real-presets.ts';
import type { SafetensorsDtype } from './safetensors.ts';
import { qwenTokenizerFiles } from './tokenizer/qwen-tokenizer-files.ts';
import { tinyTokenizerFiles } from './tokenizer/tiny-tokenizer.ts';
import { expectedWeights } from './weight-names.ts';
import { writeModelDir } from './write-model-dir.ts';

export interface InitModelOptions {
  readonly preset: ModelPreset | RealPreset;
  /** tiny/small: the architecture (default qwen2). A real preset's is its own; another one is an error. */
  readonly architecture?: Architecture;
  readonly seed: number;
  readonly dtype: SafetensorsDtype;
  /** See `RandomWeightOptions.embeddingStd`; default: the config's initializer range. */
  readonly embeddingStd?: number;
  /** tiny/small only: words to give single tokens beyond the default vocabulary (`TinyTokenizerOptions.extraPieces`). */
  readonly extraPieces?: readonly string[];
  /** Values per write chunk (see write-model-dir.ts); tests use small ones. */
  readonly chunkElements?: number;
}

const torchDtypes = { F32: 'float32', BF16: 'bfloat16', F16: 'float16' } as const satisfies Record<
  SafetensorsDtype,
  string
>;

/** The architecture a preset builds: a real preset's own, else the one asked for (default qwen2). */
export function presetArchitecture(preset: ModelPreset | RealPreset, requested?: Architecture): Architecture {
  if (!isRealPreset(preset)) return requested ?? 'qwen2';
  const own = realPresetConfig(preset).architecture;
  if (requested !== undefined && requested !== own) {
    throw new RangeError(
      `preset ${preset} is ${realPresets[preset].hubId}, a ${own} model; it cannot be built as ${requested} (leave the architecture out)`,
    );
  }
  return own;
}

interface DirectoryPlan {
  readonly config: ModelConfig;
  readonly configJson: object;
  readonly generationConfig: object;
  readonly tokenizerJson: unknown;
  readonly tokenizerConfig: unknown;
}

function planDirectory(options: InitModelOptions): DirectoryPlan {
  const architecture = presetArchitecture(options.preset, options.architecture);
  const torchDtype = torchDtypes[options.dtype];
  if (isModelPreset(options.preset)) {
    const tokenizer = tinyTokenizerFiles(options.extraPieces ? { extraPieces: options.extraPieces } : {});
    const eosTokenIds = [...tokenizer.eosTokenIds];
    const config = presetConfig(options.preset, architecture, {
      vocabSize: tokenizer.vocabSize,
      bosTokenId: tokenizer.specialTokens.bos ?? null,
      eosTokenIds,
      padTokenId: tokenizer.specialTokens.pad,
    });
    return {
      config,
      configJson: toHfConfigJson(config, torchDtype),
      generationConfig: {
        bos_token_id: config.bosTokenId,
        eos_token_id: eosTokenIds,
        pad_token_id: config.padTokenId,
        do_sample: true,
      },
      tokenizerJson: tokenizer.tokenizerJson,
      tokenizerConfig: tokenizer.tokenizerConfig,
    };
  }
  if (options.extraPieces)
    throw new RangeError(`extraPieces apply to the tiny tokenizer, not to ${options.preset}`);
  const tokenizer = qwenTokenizerFiles(realPresets[options.preset].tokenizer);
  return {
    config: realPresetConfig(options.preset),
    configJson: realPresetConfigJson(options.preset, torchDtype),
    generationConfig: realPresetGenerationConfig(),
    tokenizerJson: tokenizer.tokenizerJson,
    tokenizerConfig: tokenizer.tokenizerConfig,
  };
}

/** Writes the directory and returns the files written and the parameter count. */
export async function initModelDir(
  dir: string,
  options: InitModelOptions,
): Promise<{ files: string[]; parameters: number }> {
  const plan = planDirectory(options);
  const shapes = expectedWeights(plan.config);
  const files = await writeModelDir(dir, {
    config: plan.configJson,
    generationConfig: plan.generationConfig,
    weights: {
      shapes,
      fill: randomInit(
        plan.config,
        options.seed,
        options.embeddingStd === undefined ? {} : { embeddingStd: options.embeddingStd },
      ),
    },
    dtype: options.dtype,
    tokenizerJson: plan.tokenizerJson,
    tokenizerConfig: plan.tokenizerConfig,
    ...(options.chunkElements === undefined ? {} : { chunkElements: options.chunkElements }),
  });
  let parameters = 0;
  for (const shape of shapes.values()) parameters += shape.reduce((a, b) => a * b, 1);
  return { files, parameters };
}
