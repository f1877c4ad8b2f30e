// Batched sampling for tests, on the model runtime's real decode path (model/decode-batch.ts) and
// sampler: every row prefilled at once, one token per row per step, finished rows leaving the batch.
// The reference that serve's engine and the trainer's tiny policies are checked against. Leaves out
// logit bias, allowed tokens and continuous batching (serve/ has them).
import { DecodeBatch } from '../../model/decode-batch.ts';
import type { AdapterSelection, PolicyModel } from '../../model/policy-model.ts';
import { createRng } from '../../model/rng.ts';
import { checkSampling, type SamplingParams, sampleToken } from '../../model/sampler.ts';

export interface GenerateOptions extends Partial<SamplingParams> {
  /** Most tokens to generate per row (the stop token counts). */
  readonly maxTokens: number;
  /** Generation ends for a row after it samples one of these (included in the output). Default: the config's eos ids. */
  readonly stopTokenIds?: readonly number[];
  /** Seed for reproducible sampling; row i uses stream i of it. Default: random. */
  readonly seed?: number;
  readonly adapter?: AdapterSelection;
}

export interface Generation {
  readonly tokenIds: number[];
  /** log p(token | prefix) under the unmodified model distribution (see sampler.ts), one per token. */
  readonly logprobs: number[];
  /** 'length': maxTokens reached, or the context window full. */
  readonly finishReason: 'stop' | 'length';
}

/** Samples a continuation of each prompt; defaults as vLLM's (temperature 1, top-p 1, top-k off). */
export async function generate(
  model: PolicyModel,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<Generation[]> {
  const sampling: SamplingParams = {
    temperature: options.temperature ?? 1,
    topP: options.topP ?? 1,
    topK: options.topK ?? 0,
  };
  checkSampling(sampling);
  if (!Number.isInteger(options.maxTokens) || options.maxTokens < 1) {
    throw new RangeError(`maxTokens must be a positive integer, got ${options.maxTokens}`);
  }
  if (prompts.length === 0) return [];
  const { vocabSize, maxPositionEmbeddings, eosTokenIds } = model.config;
  const adapters = model.adaptersFor(options.adapter, prompts.length);
  const stop = new Set(options.stopTokenIds ?? eosTokenIds);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const rngs = prompts.map((_, row) => createRng(seed, row));
  const results = prompts.map((): Generation => ({ tokenIds: [], logprobs: [], finishReason: 'length' }));
  const batch = new DecodeBatch(model.decoder);
  try {
    let logits = await batch.add(prompts.map((prompt, row) => ({ prompt, adapter: adapters[row] ?? null })));
    let active = prompts.map((_, row) => row); // the prompt of each batch row
    for (;;) {
      const keep: number[] = [];
      const fed: number[] = [];
      active.forEach((row, at) => {
        const result = results[row] as Generation;
        const rowLogits = logits.subarray(at * vocabSize, (at + 1) * vocabSize);
        const { token, logprob } = sampleToken(
          rowLogits,
          sampling,
          rngs[row] as ReturnType<typeof createRng>,
        );
        result.tokenIds.push(token);
        result.logprobs.push(logprob);
        if (stop.has(token)) results[row] = { ...result, finishReason: 'stop' };
        else if (result.tokenIds.length < options.maxTokens && batch.length(at) < maxPositionEmbeddings) {
          keep.push(at);
          fed.push(token);
        }
      });
      if (keep.length === 0) break;
      batch.retain(keep);
      active = keep.map((at) => active[at] as number);
      logits = await batch.step(fed);
    }
  } finally {
    batch.dispose();
  }
  return results;
}
