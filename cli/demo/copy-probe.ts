// The warm start's evidence that it learned to copy: teacher-forced accuracy, on held-out solved
// demonstrations, of the tokens a multi-hop episode copies from its context: the start key from the
// prompt, each next key from the latest tool result (`next "f"` → `{"key": "f"}`), and the value
// (`value "5"` → the answer `value "5"`), and the token that closes the answer after the value (`"`,
// where a tool call's key closes with `"}}`). These are the phase change of the warm start
// (docs/demo.md, "Status"): a policy that follows keys but misses the value copy answers a wrong
// digit, and RL does not find the copy from rewards alone. Teacher forcing (the demonstration's own
// prefix, argmax at each copy) measures the copy apart from sampling and from earlier mistakes, so a
// few dozen demonstrations tell a learned copy (near 100%) from chance (1 in 8 keys, 1 in 10 digits).
//
// Counts are kept per symbol (each key letter, each digit) as well as per kind, because one weak
// symbol is enough to sink RL: on seed 1 the warm start passed at 96% value copy while it copied the
// digit 1 in 7 of 18 probe answers, and RL then taught it to close `value "1"` like a key
// (`value "1"}}`), which the verifier rejects. Every task whose answer is 1 then failed in all eight
// episodes of its group, so no group on those tasks had reward spread to learn from (session 9,
// docs/demo.md). The stop rule (copyReached) therefore asks the weakest symbol of every kind.
import type { TrainEngine } from '../../trainer/engine/train-engine.ts';
import type { TrainingSequence } from '../../trainer/engine/training-sequence.ts';

export const copyKinds = ['startKey', 'nextKey', 'value', 'answerEnd'] as const;
export type CopyKind = (typeof copyKinds)[number];

/** A position whose target token is copied: ids[position + 1] is predicted from ids[0..position]. */
export interface CopyTarget {
  readonly position: number;
  readonly kind: CopyKind;
  /** The key letter or digit copied (for answerEnd, the digit the answer closes after). */
  readonly symbol: string;
}

export interface CopyCount {
  readonly right: number;
  readonly total: number;
}

export type CopyAccuracy = Readonly<
  Record<CopyKind, CopyCount & { readonly bySymbol: Readonly<Record<string, CopyCount>> }>
> & {
  /**
   * The mean probability of giving up at once: of the give-up answer's first token as each
   * demonstration's first trained token (where the solved one opens its first call). Read when
   * copyAccuracy is given `quitTokenId`. The demo's start is meant to quit about as often as its
   * demonstrator, and this drifts far from it in a few dozen steps (below and warm-start.ts).
   */
  readonly quit?: number;
};

/** The token a key or value opens with in every place it appears (prompt, call, result, answer). */
const quoteOpen = ' "';

/**
 * The copy targets of one rendered demonstration: trained tokens that are a single key letter or
 * digit right after ` "` (how the environment quotes both, edge/environments/multi-hop.ts). A digit
 * is the value, and the trained token after it the answer's end; a letter before any tool response
 * is the start key, after one the next key.
 */
export function copyTargets(sequence: TrainingSequence, decodeToken: (id: number) => string): CopyTarget[] {
  const out: CopyTarget[] = [];
  let sawToolResult = false;
  for (let at = 1; at < sequence.ids.length; at++) {
    const token = decodeToken(sequence.ids[at] as number);
    if (token === '<tool_response>') sawToolResult = true;
    if (sequence.targetMask[at - 1] !== 1) continue;
    if (decodeToken(sequence.ids[at - 1] as number) !== quoteOpen) continue;
    if (/^[0-9]$/.test(token)) {
      out.push({ position: at - 1, kind: 'value', symbol: token });
      if (at + 1 < sequence.ids.length && sequence.targetMask[at] === 1)
        out.push({ position: at, kind: 'answerEnd', symbol: token });
    } else if (/^[a-z]{1,2}$/.test(token))
      out.push({ position: at - 1, kind: sawToolResult ? 'nextKey' : 'startKey', symbol: token });
  }
  return out;
}

/** The sequence with its copy targets weighted `weight` in the SFT loss (the others 1). */
export function copyWeighted(
  sequence: TrainingSequence,
  decodeToken: (id: number) => string,
  weight: number,
): TrainingSequence {
  const lossWeights = new Array<number>(sequence.targetMask.length).fill(1);
  for (const target of copyTargets(sequence, decodeToken)) lossWeights[target.position] = weight;
  return { ...sequence, lossWeights };
}

/**
 * Right and total per kind over `sequences`, argmax of the engine's next-token prediction at each
 * copy target (teacher-forced); with `quitTokenId`, also the mean probability of that token opening
 * the first trained turn.
 */
export async function copyAccuracy(
  engine: TrainEngine,
  sequences: readonly TrainingSequence[],
  decodeToken: (id: number) => string,
  options: {
    padTokenId: number;
    quitTokenId?: number /** Default true; false: the base model. */;
    adapter?: boolean;
  },
): Promise<CopyAccuracy> {
  type Count = { right: number; total: number };
  const counts = Object.fromEntries(
    copyKinds.map((kind) => [kind, { right: 0, total: 0, bySymbol: {} }]),
  ) as Record<CopyKind, Count & { bySymbol: Record<string, Count> }>;
  const rows: number[] = [];
  const positions: number[] = [];
  const tokens: number[] = [];
  const targets: { row: number; target: CopyTarget }[] = [];
  sequences.forEach((sequence, row) => {
    for (const target of copyTargets(sequence, decodeToken)) {
      targets.push({ row, target });
      rows.push(row);
      positions.push(target.position);
      tokens.push(sequence.ids[target.position + 1] as number);
    }
  });
  const quitToken = options.quitTokenId;
  const quitFrom = rows.length;
  if (quitToken !== undefined) {
    sequences.forEach((sequence, row) => {
      rows.push(row);
      positions.push(sequence.targetMask.indexOf(1));
      tokens.push(quitToken);
    });
  }
  if (rows.length === 0) return counts;
  const prediction = await engine.predict(
    sequences.map((sequence) => sequence.ids),
    { rows, positions, tokens },
    { adapter: options.adapter ?? true, padTokenId: options.padTokenId },
  );
  targets.forEach(({ row, target }, index) => {
    const count = counts[target.kind];
    count.bySymbol[target.symbol] ??= { right: 0, total: 0 };
    const symbol = count.bySymbol[target.symbol] as Count;
    const right = prediction.argmax[index] === sequences[row]?.ids[target.position + 1] ? 1 : 0;
    count.total += 1;
    count.right += right;
    symbol.total += 1;
    symbol.right += right;
  });
  if (quitToken === undefined) return counts;
  const quitLogprobs = (prediction.logprobs ?? []).slice(quitFrom);
  const quit = quitLogprobs.reduce((sum, logprob) => sum + Math.exp(logprob), 0) / sequences.length;
  return { ...counts, quit };
}

/** The share right of one kind (NaN when there were none). */
export function copyShare(accuracy: CopyAccuracy, kind: CopyKind): number {
  const { right, total } = accuracy[kind];
  return total === 0 ? Number.NaN : right / total;
}

/** The symbol of `kind` copied least often, and its share (undefined when there were none). */
export function weakestSymbol(
  accuracy: CopyAccuracy,
  kind: CopyKind,
): { readonly symbol: string; readonly share: number; readonly count: CopyCount } | undefined {
  let weakest: { symbol: string; share: number; count: CopyCount } | undefined;
  for (const [symbol, count] of Object.entries(accuracy[kind].bySymbol).sort()) {
    const share = count.right / count.total;
    if (!weakest || share < weakest.share) weakest = { symbol, share, count };
  }
  return weakest;
}

/**
 * The warm start's stop rule: the weakest symbol of every kind at least `stopAt` (a kind's share
 * averages its symbols', so it is never below its weakest; a kind with no targets fails).
 */
export function copyReached(accuracy: CopyAccuracy, stopAt: number): boolean {
  return copyKinds.every((kind) => (weakestSymbol(accuracy, kind)?.share ?? 0) >= stopAt);
}

const kindLabels: Record<CopyKind, string> = {
  startKey: 'start key',
  nextKey: 'next key',
  value: 'value',
  answerEnd: 'answer end',
};

/** `start key 100%, next key 97%, value 41% (weakest "1" 2/5), answer end 100%; quits 37%` */
export function describeCopyAccuracy(accuracy: CopyAccuracy): string {
  const quit = accuracy.quit === undefined ? '' : `; quits ${(100 * accuracy.quit).toFixed(0)}%`;
  return `${copyKinds
    .map((kind) => {
      const share = `${kindLabels[kind]} ${(100 * copyShare(accuracy, kind)).toFixed(0)}%`;
      const weakest = weakestSymbol(accuracy, kind);
      return weakest && weakest.share < 1
        ? `${share} (weakest "${weakest.symbol}" ${weakest.count.right}/${weakest.count.total})`
        : share;
    })
    .join(', ')}${quit}`;
}
