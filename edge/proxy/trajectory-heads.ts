// What the recording proxy knows of a trajectory between calls, so a call that continues a
// conversation needs no read before the upstream call: the turns stored, the history digest of the
// last, the tool list and the route the trajectory recorded. Kept per edge process (per isolate in a
// Worker) from the trajectory's start on this edge or the head read of a call, and advanced by each
// call that stores an exchange here.
//
// Never trusted for what it cannot know: the append statement checks the stored count and digest
// itself (Store.appendConversation), so a head another edge moved on (its calls stored turns since)
// still appends exactly the turns not stored, and a trajectory finished elsewhere is refused with the
// same error as before, only after the upstream call rather than before it. The prefix a head
// vouches for never changes (turns are append-only), so a request whose history disagrees with it
// is refused by a fresh read, not by the head. Entries are evicted on any refusal, on a finish
// through this edge, and least recently used first beyond `maxEntries`.
import type { ToolSpec } from '../../protocol/chat.ts';
import type { Route } from '../routing/route.ts';

export interface TrajectoryHead {
  readonly turnCount: number;
  /** The history digest of turns 0..turnCount-1 (protocol/history-digest.ts); '' with no turns. */
  readonly historyDigest: string;
  readonly tools: readonly ToolSpec[] | null;
  /** The route the trajectory recorded when it started; undefined when it recorded none. */
  readonly route: Route | undefined;
  /**
   * The digest of the trajectory's key (null: a keyless trajectory, opened before keys): a call
   * presenting another key is not vouched for by the head, and is checked by a read.
   */
  readonly keyDigest: string | null;
}

/** Heads kept by default: a few thousand live conversations per process, each a few hundred bytes plus its tools. */
export const defaultMaxHeads = 4096;

export class TrajectoryHeads {
  readonly #heads = new Map<string, TrajectoryHead>();
  readonly #maxEntries: number;

  constructor(maxEntries = defaultMaxHeads) {
    this.#maxEntries = maxEntries;
  }

  get(trajectoryId: string): TrajectoryHead | undefined {
    const head = this.#heads.get(trajectoryId);
    if (head === undefined) return undefined;
    // Map order is insertion order: re-inserting marks it the most recently used.
    this.#heads.delete(trajectoryId);
    this.#heads.set(trajectoryId, head);
    return head;
  }

  set(trajectoryId: string, head: TrajectoryHead): void {
    this.#heads.delete(trajectoryId);
    this.#heads.set(trajectoryId, head);
    if (this.#heads.size > this.#maxEntries) {
      const oldest = this.#heads.keys().next().value as string;
      this.#heads.delete(oldest);
    }
  }

  delete(trajectoryId: string): void {
    this.#heads.delete(trajectoryId);
  }

  get size(): number {
    return this.#heads.size;
  }
}
