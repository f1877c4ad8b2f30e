// Sampled-token logprobs in OpenAI's two wire shapes: chat's `logprobs.content[j] = {token, logprob,
// bytes, top_logprobs}` and legacy completions' parallel lists `{tokens, token_logprobs, top_logprobs,
// text_offset}`. Tokens print as their text, or as `token_id:<id>` with vLLM's
// `return_tokens_as_token_ids`; `bytes` are the token's own bytes (a token holding part of a UTF-8
// character has text U+FFFD but its true bytes). −∞ prints as −9999.0, as vLLM clamps it for JSON.
import type { ChatTokenizer } from '../model/tokenizer/index.ts';
import type { SampledToken, TokenLogprob } from './row-sampler.ts';
import { minLogprob } from '../protocol/validate-turns.ts';

export interface TokenNaming {
  readonly tokenizer: ChatTokenizer;
  readonly tokensAsTokenIds: boolean;
}

export interface ChatLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

export interface ChatLogprobContent extends ChatLogprob {
  top_logprobs: ChatLogprob[];
}

export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}

/** vLLM's floor for logprobs in JSON (−∞ is not JSON); the lowest logprob the store takes. */
export function finiteLogprob(value: number): number {
  return Math.max(value, minLogprob);
}

export function tokenText(id: number, naming: TokenNaming): string {
  return naming.tokensAsTokenIds ? `token_id:${id}` : naming.tokenizer.decodeToken(id);
}

function chatEntry(entry: TokenLogprob, naming: TokenNaming): ChatLogprob {
  return {
    token: tokenText(entry.tokenId, naming),
    logprob: finiteLogprob(entry.logprob),
    bytes: Array.from(naming.tokenizer.tokenBytes(entry.tokenId)),
  };
}

export function chatLogprobs(samples: readonly SampledToken[], naming: TokenNaming): ChatLogprobContent[] {
  return samples.map((sample) => ({
    ...chatEntry(sample, naming),
    top_logprobs: sample.top.map((top) => chatEntry(top, naming)),
  }));
}

/**
 * Completion logprobs for `samples`; `textOffset` is where the first token's text starts in the
 * choice's text (streams continue from the previous chunk). `top_logprobs` holds the alternatives
 * and the sampled token, so up to logprobs + 1 entries, as OpenAI's legacy API documents.
 */
export function completionLogprobs(
  samples: readonly SampledToken[],
  naming: TokenNaming,
  textOffset: number,
): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let offset = textOffset;
  for (const sample of samples) {
    const token = tokenText(sample.tokenId, naming);
    out.tokens.push(token);
    out.token_logprobs.push(finiteLogprob(sample.logprob));
    const top: Record<string, number> = {};
    for (const entry of [...sample.top, sample])
      top[tokenText(entry.tokenId, naming)] = finiteLogprob(entry.logprob);
    out.top_logprobs.push(top);
    out.text_offset.push(offset);
    offset += naming.tokensAsTokenIds ? naming.tokenizer.decodeToken(sample.tokenId).length : token.length;
  }
  return out;
}
