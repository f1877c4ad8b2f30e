// Batched sampling with a key/value cache. Prompts are left-padded to a common length (padding is
// masked out and RoPE positions start at each prompt's first real token, as transformers' generate
// does); every step feeds one token per row and reuses the cached keys/values. Each row has its own
// seeded random stream, its own adapter (or none), and stops on a stop token or at max tokens.
// Legend: B batch, L longest prompt, S cached positions, D hidden, V vocab.
import * as tf from '@tensorflow/tfjs';
import { attentionMaskBias } from './attention-mask.ts';
import { type Decoder, decoderForward } from './decoder.ts';
import type { KvCache } from './kv-cache.ts';
import { disposeKvCache } from './kv-cache.ts';
import type { LoraAdapter } from './lora.ts';
import { loraRoutes } from './lora-routes.ts';
import { createRng } from './rng.ts';
import { checkSampling, type SamplingParams, sampleToken } from './sampler.ts';
import { tidy } from './tidy.ts';

export interface GenerateOptions extends Partial<SamplingParams> {
  /** Most tokens to generate per row (the stop token counts). */
  readonly maxTokens: number;
  /** Generation ends for a row after it samples one of these (included in the output). */
  readonly stopTokenIds?: readonly number[];
  /** Seed for reproducible sampling; row i uses stream i of it. Default: random. */
  readonly seed?: number;
}

export type FinishReason = 'stop' | 'length';

export interface Generation {
  readonly tokenIds: number[];
  /** log p(token | prefix) under the unmodified model distribution (see sampler.ts), one per token. */
  readonly logprobs: number[];
  readonly finishReason: FinishReason;
}

export async function generateTokens(
  decoder: Decoder,
  prompts: readonly (readonly number[])[],
  adapters: readonly (LoraAdapter | null)[],
  options: GenerateOptions,
): Promise<Generation[]> {
  const { config } = decoder;
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
  if (adapters.length !== prompts.length)
    throw new RangeError(`${prompts.length} prompts but ${adapters.length} adapter entries`);
  const longest = Math.max(...prompts.map((p) => p.length));
  prompts.forEach((prompt, row) => {
    if (prompt.length === 0) throw new RangeError(`prompt ${row} is empty; it needs at least one token`);
  });
  if (longest > config.maxPositionEmbeddings) {
    throw new RangeError(
      `a prompt has ${longest} tokens; the model takes at most ${config.maxPositionEmbeddings} positions`,
    );
  }
  const stop = new Set(options.stopTokenIds ?? config.eosTokenIds);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const b = prompts.length;
  const rngs = prompts.map((_, row) => createRng(seed, row));
  const keyValid = prompts.map((p) =>
    Array.from({ length: longest }, (_, i) => (i < longest - p.length ? 0 : 1)),
  );
  const nextPosition = prompts.map((p) => p.length);
  const results = prompts.map(() => ({
    tokenIds: [] as number[],
    logprobs: [] as number[],
    finishReason: null as FinishReason | null,
  }));

  // Prefill: every prompt at once, [B, L].
  const padded = prompts.map((p) => [...new Array<number>(longest - p.length).fill(0), ...p]);
  const positions = prompts.map((p) =>
    Array.from({ length: longest }, (_, i) => Math.max(0, i - (longest - p.length))),
  );
  let { logits, cache } = step(decoder, padded, positions, keyValid, undefined, adapters);
  try {
    for (;;) {
      const values = (await logits.data()) as Float32Array; // [B, V]
      logits.dispose();
      const fed: number[] = [];
      for (let row = 0; row < b; row++) {
        const result = results[row] as (typeof results)[number];
        if (result.finishReason !== null) {
          fed.push(result.tokenIds.at(-1) ?? 0);
          continue;
        }
        const rowLogits = values.subarray(row * config.vocabSize, (row + 1) * config.vocabSize);
        const { token, logprob } = sampleToken(
          rowLogits,
          sampling,
          rngs[row] as ReturnType<typeof createRng>,
        );
        result.tokenIds.push(token);
        result.logprobs.push(logprob);
        fed.push(token);
        if (stop.has(token)) result.finishReason = 'stop';
        else if (
          result.tokenIds.length >= options.maxTokens ||
          (nextPosition[row] as number) >= config.maxPositionEmbeddings
        ) {
          result.finishReason = 'length';
        }
      }
      if (results.every((r) => r.finishReason !== null)) break;
      for (const row of keyValid) row.push(1);
      const stepPositions = nextPosition.map((p) => [p]);
      for (let row = 0; row < b; row++) nextPosition[row] = (nextPosition[row] as number) + 1;
      const next = step(
        decoder,
        fed.map((token) => [token]),
        stepPositions,
        keyValid,
        cache,
        adapters,
      );
      disposeKvCache(cache);
      logits = next.logits;
      cache = next.cache;
    }
  } finally {
    logits.dispose();
    disposeKvCache(cache);
  }
  return results.map((r) => ({
    tokenIds: r.tokenIds,
    logprobs: r.logprobs,
    finishReason: r.finishReason as FinishReason,
  }));
}

/** One forward call; returns the last position's logits [B, V] and the grown cache. */
function step(
  decoder: Decoder,
  ids: readonly (readonly number[])[],
  positions: readonly (readonly number[])[],
  keyValid: readonly (readonly number[])[],
  past: KvCache | undefined,
  adapters: readonly (LoraAdapter | null)[],
): { logits: tf.Tensor2D; cache: KvCache } {
  return tidy(() => {
    const b = ids.length;
    const t = ids[0]?.length ?? 0;
    const routes = loraRoutes(adapters, t);
    const { hidden, cache } = decoderForward(decoder, {
      ids: tf.tensor2d(ids.flat(), [b, t], 'int32'),
      positions: tf.tensor2d(positions.flat(), [b, t], 'int32'),
      maskBias: attentionMaskBias(keyValid, t),
      past,
      lora: routes,
      keepKv: true,
    });
    const last = tf.reshape(tf.slice(hidden, [0, t - 1, 0], [b, 1, -1]), [b, decoder.config.hiddenSize]); // [B, D]
    const logits = tf.matMul(last, decoder.weights.lmHeadT) as tf.Tensor2D; // [B, V]
    return { logits, cache: cache as KvCache };
  });
}
