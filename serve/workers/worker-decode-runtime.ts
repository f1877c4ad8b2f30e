// serve-model's batch spread over decode worker threads (`--workers N`): each worker
// (decode-worker.ts) has its own TensorFlow.js backend, its own copy of the base model and of every
// loaded adapter, and the key/value cache of the rows assigned to it (row-shards.ts). A prefill or
// decode step sends each worker its rows at once, so the workers compute in parallel while this
// thread serves HTTP; their logits come back in the engine's row order. Sampling stays in the
// engine, per row with the row's own generator, so a seeded request's tokens do not depend on N.
// An adapter load resolves only once every worker holds it (a worker that refuses it undoes it on
// the others). A worker that dies fails the batch it was part of with a 503 naming it (the engine
// fails those requests and keeps serving); it is started again, with every loaded adapter, when
// the batch is next empty. Node only.
import type { BackendChoice } from '../../model/backend-names.ts';
import type { ModelConfig } from '../../model/hf-config.ts';
import { WorkerThread } from '../../model/worker-thread/worker-thread.ts';
import type { DecodeRowSpec, DecodeRuntime } from '../decode-runtime.ts';
import { ServeError } from '../serve-error.ts';
import type { DecodeDone, DecodeRequest, DecodeWorkerStart } from './decode-worker-protocol.ts';
import { RowShards } from './row-shards.ts';

export interface WorkerDecodeOptions {
  /** Worker threads; at least 1. */
  readonly workers: number;
  /** The backend each worker activates (this thread's). */
  readonly backend: BackendChoice;
  readonly modelDir: string;
  readonly config: ModelConfig;
  /** Rows a worker takes before the next one gets any (row-shards.ts); 0 balances from the first. */
  readonly fillRows: number;
}

type DecodeThread = WorkerThread<DecodeRequest, DecodeDone>;

const entry = new URL('./decode-worker.ts', import.meta.url).href;

/** Distributes DecodeRequest's union over its `id`, so each request keeps its own fields. */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export class WorkerDecodeRuntime implements DecodeRuntime {
  readonly workers: number;
  readonly config: ModelConfig;
  readonly #options: WorkerDecodeOptions;
  readonly #threads: DecodeThread[];
  readonly #shards: RowShards;
  /** Loaded adapters by key: what a restarted worker loads before it takes rows. */
  readonly #adapters = new Map<string, string>();
  /** A request nobody awaited (retain, remove) failed: the batch is in an unknown state. */
  #broken: Error | undefined;
  #nextId = 1;

  private constructor(options: WorkerDecodeOptions, threads: DecodeThread[]) {
    this.workers = options.workers;
    this.config = options.config;
    this.#options = options;
    this.#threads = threads;
    this.#shards = new RowShards(options.workers, options.fillRows);
  }

  /** Starts the workers; resolves once each has loaded the model. */
  static async start(options: WorkerDecodeOptions): Promise<WorkerDecodeRuntime> {
    if (!(Number.isInteger(options.workers) && options.workers >= 1)) {
      throw new RangeError(`decode workers: need an integer count >= 1, got ${options.workers}`);
    }
    const threads = Array.from({ length: options.workers }, (_, index) => startThread(options, index));
    try {
      await Promise.all(threads.map((thread) => thread.ready));
    } catch (error) {
      await Promise.all(threads.map((thread) => thread.terminate()));
      throw error;
    }
    return new WorkerDecodeRuntime(options, threads);
  }

  async loadAdapter(key: string, path: string): Promise<void> {
    await this.#restartIdle();
    const results = await Promise.allSettled(
      this.#threads.map((thread) => this.#request(thread, { kind: 'load-adapter', key, path })),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) {
      results.forEach((result, w) => {
        if (result.status === 'fulfilled') this.#post(w, { kind: 'remove-adapter', key });
      });
      throw failed.reason;
    }
    this.#adapters.set(key, path);
  }

  removeAdapter(key: string): void {
    this.#adapters.delete(key);
    for (const w of this.#threads.keys()) this.#post(w, { kind: 'remove-adapter', key });
  }

  async add(rows: readonly DecodeRowSpec[]): Promise<Float32Array> {
    if (rows.length === 0) return new Float32Array(0);
    this.#throwIfBroken();
    await this.#restartIdle();
    const owners = this.#shards.assign(rows.length);
    const parts = this.#shards.split(rows, owners);
    return this.#gather(
      parts.map((part) => (part.length > 0 ? { kind: 'add', rows: part } : undefined)),
      owners,
    );
  }

  /** On the first live worker: every worker holds every adapter, and this pass touches no row's cache. */
  async promptLogits(row: DecodeRowSpec): Promise<Float32Array> {
    this.#throwIfBroken();
    await this.#restartIdle();
    const w = Math.max(
      0,
      this.#threads.findIndex((thread) => thread.alive),
    );
    const done = await this.#request(this.#threads[w] as DecodeThread, { kind: 'prompt-logits', row });
    if (!done.logits) throw new ServeError('internal', `decode worker ${w} returned no logits`);
    return done.logits;
  }

  async step(tokens: readonly number[]): Promise<Float32Array> {
    this.#throwIfBroken();
    if (tokens.length !== this.#shards.size) {
      throw new RangeError(`step got ${tokens.length} tokens for ${this.#shards.size} rows`);
    }
    const parts = this.#shards.split(tokens);
    return this.#gather(parts.map((part) => (part.length > 0 ? { kind: 'step', tokens: part } : undefined)));
  }

  retain(rows: readonly number[]): void {
    const held = this.#threads.map((_, w) => this.#shards.rowsOf(w));
    this.#shards.retain(rows).forEach((local, w) => {
      const unchanged = local.length === held[w] && local.every((row, index) => row === index);
      if (!unchanged) this.#post(w, { kind: 'retain', rows: local });
    });
  }

  clear(): void {
    this.#shards.retain([]);
    this.#threads.forEach((thread, w) => {
      if (thread.alive) this.#post(w, { kind: 'retain', rows: [] });
    });
    this.#broken = undefined;
  }

  async close(): Promise<void> {
    await Promise.all(this.#threads.map((thread) => thread.terminate()));
  }

  /** Stops worker `index` at once, as a crash would. For fault tests. */
  async kill(index: number): Promise<void> {
    await this.#threads[index]?.terminate();
  }

  /** Workers running now (a dead one counts again once restarted). */
  get running(): number {
    return this.#threads.filter((thread) => thread.alive).length;
  }

  /** Sends each worker its part at once and gathers the logits in the order of `owners`. */
  async #gather(
    parts: readonly (WithoutId<DecodeRequest> | undefined)[],
    owners?: readonly number[],
  ): Promise<Float32Array> {
    const replies = await Promise.all(
      parts.map(async (part, w) => {
        if (!part) return new Float32Array(0);
        const done = await this.#request(this.#threads[w] as DecodeThread, part);
        if (!done.logits) throw new ServeError('internal', `decode worker ${w} returned no logits`);
        return done.logits;
      }),
    );
    return this.#shards.gather(replies, this.config.vocabSize, owners);
  }

  #request(thread: DecodeThread, request: WithoutId<DecodeRequest>): Promise<DecodeDone> {
    return thread.request({ ...request, id: this.#nextId++ } as DecodeRequest);
  }

  /** A request to worker `w` whose answer nobody waits for; a failure breaks the batch. */
  #post(w: number, request: WithoutId<DecodeRequest>): void {
    const thread = this.#threads[w] as DecodeThread;
    if (!thread.alive) return;
    this.#request(thread, request).catch((error: Error) => {
      this.#broken ??= error;
    });
  }

  #throwIfBroken(): void {
    if (this.#broken) throw this.#broken;
  }

  /** Starts again each dead worker that holds no rows, with every loaded adapter. */
  async #restartIdle(): Promise<void> {
    await Promise.all(
      this.#threads.map(async (thread, w) => {
        if (thread.alive) return;
        if (this.#shards.rowsOf(w) > 0) return;
        const fresh = startThread(this.#options, w);
        this.#threads[w] = fresh;
        try {
          await fresh.ready;
          for (const [key, path] of this.#adapters) {
            await this.#request(fresh, { kind: 'load-adapter', key, path });
          }
        } catch (error) {
          await fresh.terminate();
          throw error;
        }
      }),
    );
  }
}

function startThread(options: WorkerDecodeOptions, index: number): DecodeThread {
  const data: DecodeWorkerStart = { index, backend: options.backend, modelDir: options.modelDir };
  return new WorkerThread<DecodeRequest, DecodeDone>({
    entry,
    data,
    label: `decode worker ${index}`,
    // A dead worker is the server's trouble, not the request's: 503, which clients retry.
    error: (kind, message) => new ServeError(kind === 'died' ? 'unavailable' : 'internal', message),
  });
}
