// Picks one row's next token from its logits on the host: logit bias and an allowed-token set (for
// guided decoding) shape what is sampled, then the model runtime's sampler draws. The
// returned logprobs are the raw model's, log_softmax(logits) before bias, masking, temperature and
// truncation: vLLM's default `logprobs_mode = "raw_logprobs"` and what the trainer recomputes.
import type { Rng } from '../model/rng.ts';
import { logSumExp, type SamplingParams, sampleToken } from '../model/sampler.ts';

export interface TokenLogprob {
  readonly tokenId: number;
  readonly logprob: number;
}

export interface RowSampling {
  readonly sampling: SamplingParams;
  /** How many most likely tokens to report beside the sampled one (0: none). */
  readonly topLogprobs: number;
  /** Added to the logits before sampling (OpenAI `logit_bias`, by token id). */
  readonly logitBias?: ReadonlyMap<number, number>;
  /** When given, only these ids may be sampled. */
  readonly allowedTokenIds?: ArrayLike<number>;
}

export interface SampledToken extends TokenLogprob {
  /** The `topLogprobs` most likely tokens, most likely first (ties: lower id first). */
  readonly top: readonly TokenLogprob[];
}

/** The k largest logits as logprobs (logit − normaliser), most likely first, ties by lower id. */
export function topLogprobs(logits: ArrayLike<number>, k: number, normaliser: number): TokenLogprob[] {
  const top: number[] = [];
  const better = (a: number, b: number) =>
    (logits[a] as number) > (logits[b] as number) ||
    ((logits[a] as number) === (logits[b] as number) && a < b);
  for (let id = 0; id < logits.length && k > 0; id++) {
    if (top.length === k && !better(id, top[k - 1] as number)) continue;
    let at = top.length === k ? k - 1 : top.length;
    while (at > 0 && better(id, top[at - 1] as number)) at--;
    top.splice(at, 0, id);
    if (top.length > k) top.pop();
  }
  return top.map((tokenId) => ({ tokenId, logprob: (logits[tokenId] as number) - normaliser }));
}

export function sampleRow(logits: Float32Array, row: RowSampling, rng: Rng): SampledToken {
  const normaliser = logSumExp(logits);
  let shaped: Float32Array = logits;
  if (row.allowedTokenIds || (row.logitBias && row.logitBias.size > 0)) {
    shaped = new Float32Array(logits.length);
    if (row.allowedTokenIds) {
      shaped.fill(Number.NEGATIVE_INFINITY);
      const allowed = row.allowedTokenIds;
      for (let i = 0; i < allowed.length; i++) {
        const id = allowed[i] as number;
        shaped[id] = logits[id] as number;
      }
    } else shaped.set(logits);
    for (const [id, bias] of row.logitBias ?? []) {
      if (id < shaped.length) shaped[id] = (shaped[id] as number) + bias;
    }
  }
  const { token } = sampleToken(shaped, row.sampling, rng);
  return {
    tokenId: token,
    logprob: (logits[token] as number) - normaliser,
    top: row.topLogprobs > 0 ? topLogprobs(logits, row.topLogprobs, normaliser) : [],
  };
}
