// Keeps the leases on the groups a cycle holds alive while it scores and trains: renews them every
// third of the lease, and once more on demand before anything is written (`ensure`), so a trainer
// never checkpoints or commits groups another trainer has taken over. A renewal the store refuses as
// `lease-lost` is final; other failures (a database hiccup) are retried on the next tick. Timers fire
// between micro-batches (each awaits a read-back), so a single micro-batch must stay well under the
// lease. Leaves out claiming (run-cycle.ts).
import { isStoreError } from '../../db/errors.ts';
import { errorMessage } from '../../protocol/error-message.ts';

/** Another trainer holds (or a status change ended) a lease this cycle relied on. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  readonly code = 'lease-lost';
}

export interface LeaseKeeperOptions {
  readonly renew: (groupIds: string[]) => Promise<unknown>;
  readonly leaseSeconds: number;
  readonly log?: (line: string) => void;
}

export class LeaseKeeper {
  readonly #held = new Set<string>();
  readonly #options: LeaseKeeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #lost: string | undefined;
  #renewing: Promise<void> | undefined;

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
  }

  get held(): string[] {
    return [...this.#held];
  }

  hold(groupIds: readonly string[]): void {
    for (const groupId of groupIds) this.#held.add(groupId);
  }

  drop(groupIds: readonly string[]): void {
    for (const groupId of groupIds) this.#held.delete(groupId);
  }

  start(): void {
    if (this.#timer) return;
    const everyMs = Math.max(1000, (this.#options.leaseSeconds * 1000) / 3);
    this.#timer = setInterval(() => {
      void this.#renew();
    }, everyMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Renews now and throws LeaseLostError if any held lease is gone. */
  async ensure(): Promise<void> {
    await this.#renew();
    if (this.#lost) throw new LeaseLostError(this.#lost);
  }

  async #renew(): Promise<void> {
    if (this.#renewing) return this.#renewing;
    const groupIds = this.held;
    if (groupIds.length === 0 || this.#lost) return;
    this.#renewing = (async () => {
      try {
        await this.#options.renew(groupIds);
      } catch (error) {
        if (isStoreError(error, 'lease-lost')) this.#lost = error.message;
        else this.#options.log?.(`lease renewal failed, retrying later: ${errorMessage(error)}`);
      } finally {
        this.#renewing = undefined;
      }
    })();
    return this.#renewing;
  }
}
