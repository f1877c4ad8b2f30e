// Shared by the trainer tests: the tiny Qwen2 preset with the tiny byte-level tokenizer, built in
// memory or written to a directory (as `edgerl model init` does), and sampling real episodes from it so
// the store holds genuine token ids and logprobs. Test-only.
import type { ChatMessage, ToolSpec } from '../../../protocol/chat.ts';
import { selectBackend } from '../../../model/backend.ts';
import { initModelDir } from '../../../model/init-model-dir.ts';
import { presetConfig, randomWeights } from '../../../model/init-model.ts';
import { PolicyModel } from '../../../model/policy-model.ts';
import { type ChatTokenizer, createTokenizer } from '../../../model/tokenizer/chat-tokenizer.ts';
import { tinyTokenizerFiles } from '../../../model/tokenizer/tiny-tokenizer.ts';
import { generate } from '../../support/generate.ts';

export const tinyFiles = tinyTokenizerFiles();

export async function useWasm(): Promise<void> {
  await selectBackend({ requested: 'wasm', log: () => {} });
}

export function tinyTokenizer(): ChatTokenizer {
  return createTokenizer(tinyFiles.tokenizerJson, tinyFiles.tokenizerConfig);
}

/** The tiny Qwen2 preset sized for the tiny tokenizer. */
export function tinyConfig() {
  return presetConfig('tiny', 'qwen2', {
    vocabSize: tinyFiles.vocabSize,
    bosTokenId: null,
    eosTokenIds: [tinyFiles.specialTokens.imEnd],
    padTokenId: tinyFiles.specialTokens.pad,
  });
}

export function tinyModel(seed = 1): PolicyModel {
  const config = tinyConfig();
  return PolicyModel.fromHostWeights(config, randomWeights(config, seed));
}

/** A tiny model directory on disk (what the CLI and the inference endpoint load). */
export async function writeTinyModelDir(dir: string, seed = 1): Promise<void> {
  await initModelDir(dir, { preset: 'tiny', architecture: 'qwen2', seed, dtype: 'F32' });
}

export interface SampledTurn {
  readonly content: string;
  readonly completionTokenIds: number[];
  readonly completionLogprobs: number[];
}

/**
 * Samples one assistant turn for `messages` from the model, as an inference server would: the
 * generation-prompt render, up to `maxTokens` sampled ids (stopping at <|im_end|>) with their raw
 * logprobs, and the decoded text (special tokens skipped) as the message content.
 */
export async function sampleTurn(
  model: PolicyModel,
  tokenizer: ChatTokenizer,
  messages: readonly ChatMessage[],
  options: { seed: number; maxTokens?: number; tools?: readonly ToolSpec[]; adapter?: string | null },
): Promise<SampledTurn> {
  const prompt = tokenizer.encodeChat(messages, {
    addGenerationPrompt: true,
    ...(options.tools ? { tools: options.tools } : {}),
  });
  const [generation] = await generate(model, [prompt], {
    maxTokens: options.maxTokens ?? 6,
    temperature: 1,
    seed: options.seed,
    stopTokenIds: [...tokenizer.eosTokenIds],
    adapter: options.adapter ?? null,
  });
  if (!generation) throw new Error('generate returned nothing');
  const ids = [...generation.tokenIds];
  const body =
    ids.at(-1) !== undefined && tokenizer.eosTokenIds.includes(ids.at(-1) as number) ? ids.slice(0, -1) : ids;
  return {
    content: tokenizer.decode(body, { skipSpecialTokens: true }),
    completionTokenIds: ids,
    completionLogprobs: [...generation.logprobs],
  };
}
