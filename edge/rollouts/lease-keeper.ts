// Keeps a runner's episode leases alive while no turn is being stored (a slow policy call, a slow
// tool, an episode waiting in Node's queue): one timer, and on each tick one statement per runner
// name renewing the episodes not renewed by an append lately. An episode the store no longer gives
// back was taken over or ended: its `onLost` stops the run. Used by the Node edge (one keeper for the
// process) and by the Worker's queue consumer (one per batch). Leaves out claiming (the store's).
import type { Store } from '../../db/store.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export interface LeaseKeeperOptions {
  readonly store: Store;
  readonly leaseSeconds: number;
  /** Milliseconds between ticks (episode-leases.ts' beatEveryMs). */
  readonly beatEveryMs: number;
  readonly log?: (line: string) => void;
}

interface Held {
  readonly runner: string;
  /** Local clock (only to space beats; expiry is the database's): the last renewal. */
  renewedAt: number;
  onLost: ((reason: string) => void) | undefined;
}

export class LeaseKeeper {
  readonly #options: LeaseKeeperOptions;
  readonly #held = new Map<string, Held>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #beating: Promise<void> | undefined;

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
  }

  get leaseSeconds(): number {
    return this.#options.leaseSeconds;
  }

  /** Whether the keeper beats `trajectoryId` now. */
  holds(trajectoryId: string): boolean {
    return this.#held.has(trajectoryId);
  }

  /** Starts beating `trajectoryId` (just claimed by `runner`); `onLost` is called if it is taken over. */
  hold(trajectoryId: string, runner: string, onLost?: (reason: string) => void): void {
    const held = this.#held.get(trajectoryId);
    if (held && held.runner === runner) {
      held.renewedAt = Date.now();
      held.onLost = onLost ?? held.onLost;
    } else {
      this.#held.set(trajectoryId, { runner, renewedAt: Date.now(), onLost });
    }
    this.#start();
  }

  /** A write renewed the lease (a turn append carries it): no beat is due for a while. */
  renewed(trajectoryId: string): void {
    const held = this.#held.get(trajectoryId);
    if (held) held.renewedAt = Date.now();
  }

  /** Stops beating `trajectoryId` (it ended, or its run stopped). */
  letGo(trajectoryId: string): void {
    this.#held.delete(trajectoryId);
    if (this.#held.size === 0) this.#stop();
  }

  /**
   * Stops beating and hands every held episode back in the store (expired now), so another runner
   * takes them over at once: for a runner that stops without ending them.
   */
  async releaseAll(): Promise<void> {
    this.#stop();
    await this.#beating;
    const byRunner = this.#byRunner([...this.#held.keys()]);
    this.#held.clear();
    for (const [runner, trajectoryIds] of byRunner) {
      try {
        await this.#options.store.releaseTrajectories({ runner, trajectoryIds });
      } catch (error) {
        this.#options.log?.(`releasing ${trajectoryIds.length} episode lease(s): ${errorMessage(error)}`);
      }
    }
  }

  /** One round of beats now (the timer's tick); `all`: every held episode, due or not. */
  beat(options: { readonly all?: boolean } = {}): Promise<void> {
    this.#beating ??= this.#beatDue(options.all === true).finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  async #beatDue(all: boolean): Promise<void> {
    // Renewed less than half a tick ago: the next tick comes well before its lease lapses.
    const due = all ? Number.POSITIVE_INFINITY : Date.now() - this.#options.beatEveryMs / 2;
    const ids = [...this.#held].filter(([, held]) => held.renewedAt <= due).map(([id]) => id);
    for (const [runner, trajectoryIds] of this.#byRunner(ids)) {
      const startedAt = Date.now();
      let renewed: Set<string>;
      try {
        renewed = new Set(
          await this.#options.store.beatTrajectories({
            runner,
            trajectoryIds,
            leaseSeconds: this.#options.leaseSeconds,
          }),
        );
      } catch (error) {
        // The store is unreachable: keep trying; the lease may lapse, and then the episode is taken over.
        this.#options.log?.(`episode heartbeat failed: ${errorMessage(error)}`);
        continue;
      }
      for (const trajectoryId of trajectoryIds) {
        const held = this.#held.get(trajectoryId);
        if (!held || held.runner !== runner) continue;
        if (renewed.has(trajectoryId)) {
          held.renewedAt = startedAt;
          continue;
        }
        this.#held.delete(trajectoryId);
        held.onLost?.(`${runner} lost its lease on trajectory ${trajectoryId}: taken over or ended`);
      }
    }
    if (this.#held.size === 0) this.#stop();
  }

  #byRunner(trajectoryIds: readonly string[]): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const trajectoryId of trajectoryIds) {
      const held = this.#held.get(trajectoryId);
      if (!held) continue;
      groups.set(held.runner, [...(groups.get(held.runner) ?? []), trajectoryId]);
    }
    return groups;
  }

  #start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.beat(), this.#options.beatEveryMs);
    // Node: a keeper alone does not keep the process alive (workerd's timers have no unref).
    const timer = this.#timer as { unref?: () => void };
    timer.unref?.();
  }

  #stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
