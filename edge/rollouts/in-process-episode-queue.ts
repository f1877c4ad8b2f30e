// Node's EpisodeDispatcher: a FIFO queue in the process with bounded concurrency, redelivering a
// failed run after a backoff, like a Cloudflare Queue with `max_retries` (see consume-episode.ts).
// Nothing is persisted here: the store is the durable record, and an edge restarted on the same store
// dispatches unfinished rollouts again (edge/runtime/node.ts).
import type { EpisodeDispatcher, EpisodeMessage } from './episode-message.ts';

export interface InProcessQueueOptions {
  /** Episodes running at once. */
  readonly concurrency: number;
  /** Runs one delivery; resolves true to acknowledge, false to have the message delivered again. */
  run(message: EpisodeMessage, attempt: number, signal: AbortSignal): Promise<boolean>;
  /** Delay before redelivery number `attempt` (2 for the first redelivery), in milliseconds. */
  readonly retryDelayMs?: (attempt: number) => number;
  /** Called when `run` itself throws (a bug): the message is dropped. */
  onError?(message: EpisodeMessage, error: unknown): void;
  /** Milliseconds, for the mean run time; tests replace it. Default performance.now. */
  readonly now?: () => number;
}

interface Entry {
  readonly message: EpisodeMessage;
  readonly attempt: number;
}

/** 1 s, 2 s, 4 s, … capped at 30 s: Cloudflare Queues' retry delay is of the same order. */
const defaultRetryDelayMs = (attempt: number) => Math.min(30_000, 1000 * 2 ** (attempt - 2));

export class InProcessEpisodeQueue implements EpisodeDispatcher {
  readonly #options: InProcessQueueOptions;
  readonly #pending: Entry[] = [];
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #abort = new AbortController();
  #running = 0;
  #closed = false;
  /** Moving mean of delivery run times, in ms (admission's Retry-After); undefined before the first. */
  #meanRunMs: number | undefined;
  #idleWaiters: (() => void)[] = [];

  constructor(options: InProcessQueueOptions) {
    if (!(Number.isInteger(options.concurrency) && options.concurrency >= 1)) {
      throw new Error(`concurrency must be a positive integer, got ${options.concurrency}`);
    }
    this.#options = options;
  }

  async dispatch(messages: readonly EpisodeMessage[]): Promise<void> {
    if (this.#closed) throw new Error('the episode queue is closed');
    for (const message of messages) this.#pending.push({ message, attempt: 1 });
    this.#pump();
  }

  /** Messages waiting (not counting those waiting for a retry) and runs in progress. */
  get size(): { readonly pending: number; readonly running: number; readonly retrying: number } {
    return { pending: this.#pending.length, running: this.#running, retrying: this.#timers.size };
  }

  /**
   * Mean run time of recent deliveries, in ms: an exponential moving mean with weight 0.1 (about the
   * last ten runs), for admission's Retry-After (admit-episodes.ts). Undefined before the first ends.
   */
  get meanRunMs(): number | undefined {
    return this.#meanRunMs;
  }

  /** Resolves once nothing is pending, running or waiting for a retry. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking messages, drops those not started, cancels running episodes and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#pending.length = 0;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#abort.abort(new Error('the edge is shutting down'));
    await this.idle();
  }

  #pump(): void {
    while (!this.#closed && this.#running < this.#options.concurrency) {
      const entry = this.#pending.shift();
      if (!entry) break;
      this.#running += 1;
      void this.#deliver(entry).finally(() => {
        this.#running -= 1;
        this.#pump();
        this.#notifyIdle();
      });
    }
    this.#notifyIdle();
  }

  async #deliver(entry: Entry): Promise<void> {
    let ack: boolean;
    const now = this.#options.now ?? (() => performance.now());
    const started = now();
    try {
      ack = await this.#options.run(entry.message, entry.attempt, this.#abort.signal);
    } catch (error) {
      this.#options.onError?.(entry.message, error);
      return;
    } finally {
      const ms = now() - started;
      this.#meanRunMs = this.#meanRunMs === undefined ? ms : this.#meanRunMs + 0.1 * (ms - this.#meanRunMs);
    }
    if (ack || this.#closed) return;
    const attempt = entry.attempt + 1;
    const timer = setTimeout(
      () => {
        this.#timers.delete(timer);
        if (this.#closed) return this.#notifyIdle();
        this.#pending.push({ message: entry.message, attempt });
        this.#pump();
      },
      (this.#options.retryDelayMs ?? defaultRetryDelayMs)(attempt),
    );
    this.#timers.add(timer);
  }

  #isIdle(): boolean {
    return this.#pending.length === 0 && this.#running === 0 && this.#timers.size === 0;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }
}
