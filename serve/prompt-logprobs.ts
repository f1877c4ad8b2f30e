// vLLM's `prompt_logprobs` extension, from the logits at every prompt position: per prompt token, a
// map from token id to {logprob, rank, decoded_token} holding the prompt's own token and the `top`
// most likely ones, and `null` for the first token (nothing predicts it). The shape is vLLM's
// PromptLogprobs (vllm/logprobs.py: list[dict[int, Logprob] | None]) as its server writes it to JSON
// (ids become string keys, −∞ is clamped to −9999.0). Pure. Legend: T prompt tokens, V vocab.

/** vLLM's Logprob dataclass as JSON: the logprob, its rank in the vocabulary (1 = most likely), the text. */
export interface PromptLogprobEntry {
  readonly logprob: number;
  readonly rank: number;
  readonly decoded_token: string;
}

export type PromptLogprobs = (Record<string, PromptLogprobEntry> | null)[];

/** vLLM's floor for logprobs in JSON (−∞ is not JSON). */
const floor = -9999;

/**
 * logits [T, V] (row t: the logits after prompt token t) and the prompt's T ids → T entries. Position
 * t ≥ 1 scores prompt[t] with row t − 1: log p(prompt[t] | prompt[< t]) = l_y − log Σ_v exp(l_v).
 */
export function promptLogprobs(
  logits: Float32Array,
  promptIds: readonly number[],
  vocabSize: number,
  top: number,
  decode: (tokenId: number) => string,
): PromptLogprobs {
  if (logits.length !== promptIds.length * vocabSize) {
    throw new RangeError(
      `promptLogprobs: ${logits.length} logits for ${promptIds.length} tokens × ${vocabSize} vocabulary`,
    );
  }
  const out: PromptLogprobs = [null];
  for (let t = 1; t < promptIds.length; t++) {
    const row = logits.subarray((t - 1) * vocabSize, t * vocabSize); // [V]
    let max = Number.NEGATIVE_INFINITY;
    for (const value of row) if (value > max) max = value;
    let sum = 0;
    for (const value of row) sum += Math.exp(value - max);
    const lse = max + Math.log(sum);
    const entry = (id: number): PromptLogprobEntry => {
      const logit = row[id] as number;
      let above = 0;
      for (const value of row) if (value > logit) above += 1;
      return { logprob: Math.max(logit - lse, floor), rank: above + 1, decoded_token: decode(id) };
    };
    const target = promptIds[t] as number;
    // The prompt's own token first, then the top ones (vLLM lists them in that order).
    const ids = [target, ...topIds(row, top).filter((id) => id !== target)];
    out.push(Object.fromEntries(ids.map((id) => [String(id), entry(id)])));
  }
  return out;
}

/** The `k` largest entries' indices, largest first (ties: lower id first). */
function topIds(row: Float32Array, k: number): number[] {
  if (k <= 0) return [];
  const best: number[] = [];
  for (let id = 0; id < row.length; id++) {
    const value = row[id] as number;
    if (best.length === k && value <= (row[best[k - 1] as number] as number)) continue;
    let at = best.length;
    while (at > 0 && (row[best[at - 1] as number] as number) < value) at -= 1;
    best.splice(at, 0, id);
    if (best.length > k) best.pop();
  }
  return best;
}
