// Which waiting sequences join the running batch before the next decode step (continuous batching,
// Yu et al. 2022, Orca, OSDI '22: requests join and leave at step boundaries instead of waiting for
// the batch to drain). First come, first served, as vLLM's default scheduler: the queue's head joins
// while the batch has room (`maxNumSeqs`, vLLM's --max-num-seqs) and the joining prefill stays within
// `maxPrefillTokens` padded tokens (vLLM's --max-num-batched-tokens); the head always joins an empty
// batch so an oversized prompt cannot block the queue. Pure: lengths in, a count out.

export interface BatchLimits {
  /** Most rows decoding at once. */
  readonly maxNumSeqs: number;
  /** Most prompt tokens one joining prefill may hold, counted padded (rows × longest prompt). */
  readonly maxPrefillTokens: number;
}

/** How many sequences from the head of `waitingPromptLengths` join a batch of `running` rows. */
export function planAdmission(
  waitingPromptLengths: readonly number[],
  running: number,
  limits: BatchLimits,
): number {
  let admitted = 0;
  let longest = 0;
  for (const length of waitingPromptLengths) {
    if (running + admitted >= limits.maxNumSeqs) break;
    const nextLongest = Math.max(longest, length);
    const padded = (admitted + 1) * nextLongest;
    if (admitted > 0 && padded > limits.maxPrefillTokens) break;
    if (admitted === 0 && running > 0 && padded > limits.maxPrefillTokens) break;
    admitted += 1;
    longest = nextLongest;
  }
  return admitted;
}
