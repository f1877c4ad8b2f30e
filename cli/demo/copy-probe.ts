// The warm start's evidence that it learned to copy: teacher-forced accuracy, on held-out solved
// demonstrations, of the tokens a multi-hop episode copies from its context: the start key from the
// prompt, each next key from the latest tool result (`next "f"` → `{"key": "f"}`), and the value
// (`value "5"` → the answer `value "5"`). These are the phase change of the warm start (docs/demo.md,
// "Status"): a policy that follows keys but misses the value copy answers a wrong digit, and RL does
// not find the copy from rewards alone. Teacher forcing (the demonstration's own prefix, argmax at
// each copy) measures the copy apart from sampling and from earlier mistakes, so a few dozen
// demonstrations tell a learned copy (near 100%) from chance (1 in 8 keys, 1 in 10 digits).
import * as tf from '@tensorflow/tfjs';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { TrainingSequence } from '../../trainer/train/build-batch.ts';

export const copyKinds = ['startKey', 'nextKey', 'value'] as const;
export type CopyKind = (typeof copyKinds)[number];

/** A position whose target token is copied: ids[position + 1] is predicted from ids[0..position]. */
export interface CopyTarget {
  readonly position: number;
  readonly kind: CopyKind;
}

export type CopyAccuracy = Readonly<Record<CopyKind, { readonly right: number; readonly total: number }>>;

/** The token a key or value opens with in every place it appears (prompt, call, result, answer). */
const quoteOpen = ' "';

/**
 * The copy targets of one rendered demonstration: trained tokens that are a single key letter or
 * digit right after ` "` (how the environment quotes both, edge/environments/multi-hop.ts). A digit
 * is the value; a letter before any tool response is the start key, after one the next key.
 */
export function copyTargets(sequence: TrainingSequence, decodeToken: (id: number) => string): CopyTarget[] {
  const out: CopyTarget[] = [];
  let sawToolResult = false;
  for (let at = 1; at < sequence.ids.length; at++) {
    const token = decodeToken(sequence.ids[at] as number);
    if (token === '<tool_response>') sawToolResult = true;
    if (sequence.targetMask[at - 1] !== 1) continue;
    if (decodeToken(sequence.ids[at - 1] as number) !== quoteOpen) continue;
    if (/^[0-9]$/.test(token)) out.push({ position: at - 1, kind: 'value' });
    else if (/^[a-z]{1,2}$/.test(token))
      out.push({ position: at - 1, kind: sawToolResult ? 'nextKey' : 'startKey' });
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

/** Right and total per kind over `sequences`, argmax of the model's next-token logits, in batches. */
export async function copyAccuracy(
  model: PolicyModel,
  adapter: string | null,
  sequences: readonly TrainingSequence[],
  decodeToken: (id: number) => string,
  options: { padTokenId: number; batchSize?: number },
): Promise<CopyAccuracy> {
  const counts = Object.fromEntries(copyKinds.map((kind) => [kind, { right: 0, total: 0 }])) as Record<
    CopyKind,
    { right: number; total: number }
  >;
  const batchSize = options.batchSize ?? 16;
  for (let start = 0; start < sequences.length; start += batchSize) {
    const chunk = sequences.slice(start, start + batchSize);
    const t = Math.max(...chunk.map((sequence) => sequence.ids.length));
    const ids = chunk.map((sequence) => [
      ...sequence.ids,
      ...new Array<number>(t - sequence.ids.length).fill(options.padTokenId),
    ]);
    const attentionMask = chunk.map((sequence) =>
      Array.from({ length: t }, (_, at) => (at < sequence.ids.length ? 1 : 0)),
    );
    const argmax = tf.tidy(() => tf.argMax(model.forwardLogits(ids, { adapter, attentionMask }), 2)); // [B, T]
    const best = (await argmax.data()) as Int32Array;
    argmax.dispose();
    chunk.forEach((sequence, row) => {
      for (const target of copyTargets(sequence, decodeToken)) {
        const count = counts[target.kind];
        count.total += 1;
        if (best[row * t + target.position] === sequence.ids[target.position + 1]) count.right += 1;
      }
    });
  }
  return counts;
}

/** The share right of one kind (NaN when there were none). */
export function copyShare(accuracy: CopyAccuracy, kind: CopyKind): number {
  const { right, total } = accuracy[kind];
  return total === 0 ? Number.NaN : right / total;
}

/** `start key 100%, next key 97%, value 41%` */
export function describeCopyAccuracy(accuracy: CopyAccuracy): string {
  const pct = (kind: CopyKind) => `${(100 * copyShare(accuracy, kind)).toFixed(0)}%`;
  return `start key ${pct('startKey')}, next key ${pct('nextKey')}, value ${pct('value')}`;
}
