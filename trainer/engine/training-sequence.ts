// One rendered trajectory as every engine trains it: token ids, which targets are trained, their
// sampling log-probs and the advantage. Built by trainer/train/build-batch.ts; an engine's input.
// Alignment: entry t of every per-target array describes token t + 1 (the model predicts it from ≤ t).

export interface TrainingSequence {
  readonly trajectoryId: string;
  readonly groupId: string | null;
  /** [T] token ids. */
  readonly ids: number[];
  /** [T − 1] 1 where token t + 1 is trained (an assistant token), else 0. */
  readonly targetMask: number[];
  /** [T − 1] sampling logprob of token t + 1; NaN where unknown (context, or `onPolicy`). */
  readonly oldLogprobs: number[];
  /** [T − 1] 1 where token t + 1 is trained without a sampling logprob: ratio ≡ 1. */
  readonly onPolicy: number[];
  readonly advantage: number;
  /**
   * [T − 1] SFT only: each trained token's weight in the token-mean loss (default 1; the step's
   * normaliser still counts tokens, so a weight w counts that token w times). Set by the demo's warm
   * start on the tokens it must learn to copy (cli/demo/copy-probe.ts).
   */
  readonly lossWeights?: readonly number[];
  /** Σ targetMask. */
  readonly trainedTokens: number;
}
