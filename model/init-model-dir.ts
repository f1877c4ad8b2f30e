// `edgerl model init`'s work: a complete tiny Hugging Face model directory — config.json,
// generation_config.json, model.safetensors (seeded random weights) and the tiny byte-level tokenizer
// with ChatML specials and a tool-calling chat template (from ./tokenizer/).
import { type Architecture, toHfConfigJson } from './hf-config.ts';
import { type ModelPreset, presetConfig, randomWeights } from './init-model.ts';
import type { SafetensorsDtype } from './safetensors.ts';
import { tinyTokenizerFiles } from './tokenizer/tiny-tokenizer.ts';
import { writeModelDir } from './write-model-dir.ts';

export interface InitModelOptions {
  readonly preset: ModelPreset;
  readonly architecture: Architecture;
  readonly seed: number;
  readonly dtype: SafetensorsDtype;
  /** See `RandomWeightOptions.embeddingStd`; default: the config's initializer range. */
  readonly embeddingStd?: number;
  /** Words to give single tokens beyond the default vocabulary (`TinyTokenizerOptions.extraPieces`). */
  readonly extraPieces?: readonly string[];
}

const torchDtypes = { F32: 'float32', BF16: 'bfloat16', F16: 'float16' } as const satisfies Record<
  SafetensorsDtype,
  string
>;

/** Writes the directory and returns the files written and the parameter count. */
export async function initModelDir(
  dir: string,
  options: InitModelOptions,
): Promise<{ files: string[]; parameters: number }> {
  const tokenizer = tinyTokenizerFiles(options.extraPieces ? { extraPieces: options.extraPieces } : {});
  const eosTokenIds = [...tokenizer.eosTokenIds];
  const config = presetConfig(options.preset, options.architecture, {
    vocabSize: tokenizer.vocabSize,
    bosTokenId: tokenizer.specialTokens.bos ?? null,
    eosTokenIds,
    padTokenId: tokenizer.specialTokens.pad,
  });
  const weights = randomWeights(
    config,
    options.seed,
    options.embeddingStd === undefined ? {} : { embeddingStd: options.embeddingStd },
  );
  const files = await writeModelDir(dir, {
    config: toHfConfigJson(config, torchDtypes[options.dtype]),
    generationConfig: {
      bos_token_id: config.bosTokenId,
      eos_token_id: eosTokenIds,
      pad_token_id: config.padTokenId,
      do_sample: true,
    },
    weights,
    dtype: options.dtype,
    tokenizerJson: tokenizer.tokenizerJson,
    tokenizerConfig: tokenizer.tokenizerConfig,
  });
  let parameters = 0;
  for (const tensor of weights.values()) parameters += tensor.data.length;
  return { files, parameters };
}
