// The episode loop's TrajectorySink over the store. It tells two kinds of failure apart: the store
// being unreachable (the episode should be retried later: `storeFailure`), and the store refusing a
// turn because another run of the same episode got there first (`superseded`: a re-delivered queue
// message raced the original). A superseded run must not close the trajectory the other run owns,
// so its finish is skipped. An episode that ends because the store could not take a turn is not
// closed either: it stays `running` for the queue's next delivery to resume from its stored turns.
// Every write carries the runner's lease: an append (a whole step, one statement) renews it, and a
// runner whose episode was taken over (`lease-lost`) is superseded too. The last step is written with
// the finish, in one statement (appendFinalTurns). Every step is held to the rules of every writer of
// turns (protocol/validate-turns.ts) before it goes to the store: a refused step is a `validation`
// error, which no retry mends.
import { isStoreError, StoreError } from '../../db/errors.ts';
import type { Store, TrajectoryLease } from '../../db/store.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import {
  type CheckedTurn,
  episodeStart,
  sequenceIssues,
  type TurnSequence,
  turnValueIssues,
  validateTurns,
} from '../../protocol/validate-turns.ts';
import type { TrajectoryEnd, TrajectorySink } from '../episode/trajectory-sink.ts';

export class StoreTrajectorySink implements TrajectorySink {
  readonly trajectoryId: string;
  readonly #store: Store;
  /** Why this run lost the trajectory to another run (or runner), if it did. */
  superseded: string | undefined;
  /**
   * The error of an unreachable or failing store, while the latest write failed that way (a write
   * that succeeds after it clears it: the retry rode the failure out).
   */
  storeFailure: unknown;

  /** True when `finish` was skipped because `holdFinish` said so. */
  held = false;
  readonly #holdFinish: () => boolean;
  readonly #lease: TrajectoryLease;
  readonly #onStored: () => void;
  /** Where the stored turns leave the order rules, and the index the next step starts at. */
  #sequence: { readonly next: number; readonly state: TurnSequence };

  /**
   * `lease`: the runner holding the episode. `holdFinish`: when it returns true at the end, the
   * trajectory is left `running` instead of being closed (the edge is shutting down: the episode
   * resumes from its stored turns on the next start). `onStored`: a turn was stored (the lease with it).
   * `history`: the turns already stored, when the episode resumes after them.
   */
  constructor(
    store: Store,
    trajectoryId: string,
    options: {
      readonly lease: TrajectoryLease;
      readonly holdFinish?: () => boolean;
      readonly onStored?: () => void;
      readonly history?: readonly CheckedTurn[];
    },
  ) {
    this.#store = store;
    this.trajectoryId = trajectoryId;
    this.#lease = options.lease;
    this.#holdFinish = options.holdFinish ?? (() => false);
    this.#onStored = options.onStored ?? (() => {});
    const history = options.history ?? [];
    this.#sequence = { next: history.length, state: sequenceIssues(history).end };
  }

  async appendTurns(turns: readonly TurnInput[]): Promise<void> {
    try {
      this.#check(turns);
      await this.#store.appendTurns(turns, this.#lease);
      this.#advance(turns);
      this.storeFailure = undefined;
      this.#onStored();
    } catch (error) {
      this.#classify(error);
      throw error;
    }
  }

  async finish(end: TrajectoryEnd, turns: readonly TurnInput[] = []): Promise<void> {
    if (this.superseded) return;
    if (this.#holdFinish()) {
      // Left running to resume: its last step is kept when the store takes it, so the resumed run
      // starts after it (otherwise it asks for that step again).
      if (turns.length > 0) await this.appendTurns(turns).catch(() => {});
      this.held = true;
      return;
    }
    // The episode ends because a turn could not be written (the store was away): closing it as
    // `error` now, with the store back, would turn the redelivery into a no-op and drop the episode.
    // Left running, the next delivery resumes it; the last one closes it (consume-episode.ts).
    if (this.storeFailure !== undefined && end.status === 'error' && turns.length === 0) return;
    const finish = {
      status: end.status,
      ...(end.verifierReward !== undefined ? { verifierReward: end.verifierReward } : {}),
      ...(end.status === 'error' ? { errorReason: end.errorReason ?? 'unknown error' } : {}),
      ...(end.status === 'truncated' && end.detail ? { errorReason: end.detail } : {}),
      ...(end.detail ? { metadata: { detail: end.detail } } : {}),
    };
    try {
      if (turns.length > 0) {
        this.#check(turns);
        // The last step and the end in one statement (one round trip).
        await this.#store.appendFinalTurns({ turns, finish, lease: this.#lease });
        this.#advance(turns);
        this.storeFailure = undefined;
        this.#onStored();
      } else {
        await this.#store.finishTrajectory({
          trajectoryId: this.trajectoryId,
          runner: this.#lease.runner,
          ...finish,
        });
      }
    } catch (error) {
      this.#classify(error);
      if (this.superseded) return;
      // The store refused the last step itself (a value it cannot hold): retrying the same step
      // fails the same way, and leaving the trajectory running stalled it until its lease lapsed and
      // another edge resumed it into the same refusal. It ends `error` now, without that step.
      if (isStoreError(error, 'validation') && turns.length > 0) {
        await this.#store.finishTrajectory({
          trajectoryId: this.trajectoryId,
          runner: this.#lease.runner,
          status: 'error',
          errorReason: `store refused the last step: ${error.message}`.slice(0, 2000),
        });
        return;
      }
      throw error;
    }
  }

  /**
   * Throws a `validation` StoreError for a step no writer may store. The order is checked from the
   * stored turns when the step follows them; a step that repeats stored turns (a retried append, which
   * the store takes as a no-op) is checked for its values only.
   */
  #check(turns: readonly TurnInput[]): void {
    const start = this.#startOf(turns);
    const issue = start
      ? validateTurns(turns, start).issues[0]
      : turns
          .flatMap((turn, offset) =>
            turnValueIssues(turn).map((found) => ({ ...found, path: [offset, ...found.path] })),
          )
          .at(0);
    if (!issue) return;
    const [offset, ...field] = issue.path as [number, ...(string | number)[]];
    const index = (turns[offset] as TurnInput).index;
    throw new StoreError('validation', `appendTurns: turn ${index}: ${field.join('.')}: ${issue.message}`, {
      issues: [
        { code: 'custom', path: ['turns', index, ...field], message: issue.message, input: undefined },
      ],
    });
  }

  /** The order state a step starts from: the episode's start, the stored turns' end, or unknown (a repeat). */
  #startOf(turns: readonly TurnInput[]): TurnSequence | undefined {
    const first = turns[0]?.index;
    if (first === 0) return episodeStart;
    return first === this.#sequence.next ? this.#sequence.state : undefined;
  }

  #advance(turns: readonly TurnInput[]): void {
    const start = this.#startOf(turns);
    const last = turns.at(-1);
    if (start && last) this.#sequence = { next: last.index + 1, state: sequenceIssues(turns, start).end };
  }

  #classify(error: unknown): void {
    if (
      isStoreError(error, 'conflict') ||
      isStoreError(error, 'trajectory-closed') ||
      isStoreError(error, 'lease-lost')
    ) {
      this.superseded = error.message;
    } else if (!isStoreError(error, 'validation')) {
      this.storeFailure = error;
    }
  }
}
