// The episode loop's TrajectorySink over the store. It tells two kinds of failure apart: the store
// being unreachable (the episode should be retried later: `storeFailure`), and the store refusing a
// turn because another run of the same episode got there first (`superseded`: a re-delivered queue
// message raced the original). A superseded run must not close the trajectory the other run owns,
// so its finish is skipped. An episode that ends because the store could not take a turn is not
// closed either: it stays `running` for the queue's next delivery to resume from its stored turns.
// Every write carries the runner's lease: an append (a whole step, one statement) renews it, and a
// runner whose episode was taken over (`lease-lost`) is superseded too. The last step is written with
// the finish, in one statement (appendFinalTurns).
import { isStoreError } from '../../db/errors.ts';
import type { Store, TrajectoryLease } from '../../db/store.ts';
import type { TurnInput } from '../../protocol/turn.ts';
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

  /**
   * `lease`: the runner holding the episode. `holdFinish`: when it returns true at the end, the
   * trajectory is left `running` instead of being closed (the edge is shutting down: the episode
   * resumes from its stored turns on the next start). `onStored`: a turn was stored (the lease with it).
   */
  constructor(
    store: Store,
    trajectoryId: string,
    options: {
      readonly lease: TrajectoryLease;
      readonly holdFinish?: () => boolean;
      readonly onStored?: () => void;
    },
  ) {
    this.#store = store;
    this.trajectoryId = trajectoryId;
    this.#lease = options.lease;
    this.#holdFinish = options.holdFinish ?? (() => false);
    this.#onStored = options.onStored ?? (() => {});
  }

  async appendTurns(turns: readonly TurnInput[]): Promise<void> {
    try {
      await this.#store.appendTurns(turns, this.#lease);
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
        // The last step and the end in one statement (one round trip).
        await this.#store.appendFinalTurns({ turns, finish, lease: this.#lease });
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
      throw error;
    }
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
