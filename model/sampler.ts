// Picks the next token from one row of logits on the host: greedy at temperature 0, else softmax at
// the temperature, then top-k, then nucleus (top-p, Holtzman et al. 2019, arXiv:1904.09751: keep the
// smallest set of most likely tokens whose mass reaches p), renormalised. The returned logprob is the
// raw model's, log_softmax(logits) at the token, before temperature and truncation — what vLLM returns
// by default (logprobs_mode "raw_logprobs") and what the trainer recomputes.
import type { Rng } from './rng.ts';

export interface SamplingParams {
  /** 0 means greedy. vLLM / OpenAI default: 1. */
  readonly temperature: number;
  /** Nucleus mass in (0, 1]; 1 keeps every token. vLLM default: 1. */
  readonly topP: number;
  /** Keep only the k most likely tokens; 0 (or ≥ V) keeps all. vLLM default: off. */
  readonly topK: number;
}

export function checkSampling(params: SamplingParams): void {
  if (!(params.temperature >= 0) || !Number.isFinite(params.temperature)) {
    throw new RangeError(`temperature must be a finite number ≥ 0, got ${params.temperature}`);
  }
  if (!(params.topP > 0 && params.topP <= 1))
    throw new RangeError(`topP must be in (0, 1], got ${params.topP}`);
  if (!Number.isInteger(params.topK) || params.topK < 0) {
    throw new RangeError(`topK must be a non-negative integer, got ${params.topK}`);
  }
}

/** log Σ exp(logits), in float64 with the max subtracted: the softmax normaliser. */
export function logSumExp(logits: ArrayLike<number>): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] as number) - max);
  return max + Math.log(sum);
}

/** log_softmax(logits)[token], in float64. */
export function tokenLogprob(logits: ArrayLike<number>, token: number): number {
  return (logits[token] as number) - logSumExp(logits);
}

/** The distribution sampling draws from, as (token, probability) pairs: most likely first when top-k or
 * top-p truncates, else every token in id order (no sort over the vocabulary). */
export function samplingDistribution(
  logits: ArrayLike<number>,
  params: SamplingParams,
): { tokens: number[]; probs: number[] } {
  const v = logits.length;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < v; i++) max = Math.max(max, logits[i] as number);
  const weights = new Float64Array(v);
  let total = 0;
  for (let i = 0; i < v; i++) {
    const w = Math.exp(((logits[i] as number) - max) / params.temperature);
    weights[i] = w;
    total += w;
  }
  if (params.topK === 0 && params.topP === 1) {
    return { tokens: Array.from({ length: v }, (_, i) => i), probs: Array.from(weights, (w) => w / total) };
  }
  // Stable order: probability descending, then token id ascending.
  const order = Array.from({ length: v }, (_, i) => i).sort(
    (a, b) => (weights[b] as number) - (weights[a] as number) || a - b,
  );
  let keep = params.topK > 0 ? Math.min(params.topK, v) : v;
  if (params.topP < 1) {
    let kept = 0;
    let mass = 0;
    for (; kept < keep; kept++) {
      mass += (weights[order[kept] as number] as number) / total;
      if (mass >= params.topP) {
        kept += 1;
        break;
      }
    }
    keep = Math.max(1, Math.min(keep, kept));
  }
  const tokens = order.slice(0, keep);
  const keptMass = tokens.reduce((sum, token) => sum + (weights[token] as number), 0);
  return { tokens, probs: tokens.map((token) => (weights[token] as number) / keptMass) };
}

export function sampleToken(
  logits: ArrayLike<number>,
  params: SamplingParams,
  rng: Rng,
): { token: number; logprob: number } {
  let token = 0;
  if (params.temperature === 0) {
    for (let i = 1; i < logits.length; i++) if ((logits[i] as number) > (logits[token] as number)) token = i;
  } else {
    const { tokens, probs } = samplingDistribution(logits, params);
    const u = rng.next();
    let cumulative = 0;
    token = tokens[tokens.length - 1] as number;
    for (let i = 0; i < tokens.length; i++) {
      cumulative += probs[i] as number;
      if (u < cumulative) {
        token = tokens[i] as number;
        break;
      }
    }
  }
  return { token, logprob: tokenLogprob(logits, token) };
}
