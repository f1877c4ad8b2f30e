// "Same task, two versions": both versions resolved from their served names (or ids), and their
// latest answers to every task both answered, with a tally of who got which right.
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { SameTaskAnswer, Store } from '../../db/store.ts';
import type { TaskSplit } from '../../protocol/statuses.ts';

export interface CompareView {
  readonly a: PolicyVersion;
  readonly b: PolicyVersion;
  readonly split: TaskSplit | undefined;
  readonly rows: SameTaskAnswer[];
  /** Rows where only A, only B, both or neither earned a reward of at least `threshold`. */
  readonly tally: {
    readonly onlyA: number;
    readonly onlyB: number;
    readonly both: number;
    readonly neither: number;
  };
}

/** A reward at or above this counts as right in the tally (rewards of 0/1: a pass). */
export const rightThreshold = 0.5;

export async function loadCompare(
  store: Store,
  a: string,
  b: string,
  split: TaskSplit | undefined,
): Promise<CompareView> {
  const [first, second] = await Promise.all([store.resolveVersionRef(a), store.resolveVersionRef(b)]);
  const rows = await store.sameTaskAnswers({
    versionIds: [first.id, second.id],
    ...(split ? { split } : {}),
    limit: 500,
  });
  const right = (reward: number | null) => reward !== null && reward >= rightThreshold;
  const tally = { onlyA: 0, onlyB: 0, both: 0, neither: 0 };
  for (const row of rows) {
    const [x, y] = row.answers.map((answer) => right(answer.reward));
    if (x && y) tally.both += 1;
    else if (x) tally.onlyA += 1;
    else if (y) tally.onlyB += 1;
    else tally.neither += 1;
  }
  return { a: first, b: second, split, rows, tally };
}
