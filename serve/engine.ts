// The batching engine behind the endpoint: one loop owns the decode runtime (decode-runtime.ts: the
// model in this thread, or spread over worker threads), so decode steps, prefills and adapter
// loads/unloads never overlap. Each turn of the loop runs queued adapter operations, lets waiting
// sequences join the running batch (continuous batching: arrivals join at the next step boundary, see
// scheduler.ts), prefills them, then decodes one token for every running row. Rows stop on their own (the sequence's callback decides), leave the batch at
// once, and free their adapter lease. Leaves out prefix caching, preemption and chunked prefill.
import { existsSync, statSync } from 'node:fs';
import { createRng, type Rng } from '../model/rng.ts';
import { AdapterRegistry, type AdapterEntry } from './adapter-registry.ts';
import type { DecodeRuntime } from './decode-runtime.ts';
import { type RowSampling, type SampledToken, sampleRow } from './row-sampler.ts';
import { type BatchLimits, planAdmission } from './scheduler.ts';
import { ServeError } from './serve-error.ts';
import type { ServeFault } from './serve-fault.ts';
import { errorMessage } from '../protocol/error-message.ts';

export interface EngineOptions extends BatchLimits {
  /** Longest sequence (prompt + output) served: vLLM's max_model_len. */
  readonly maxModelLen: number;
  /** A fault hook for tests (serve-fault.ts); absent in service. */
  readonly fault?: ServeFault;
}

export type EngineEnd =
  | { readonly kind: 'length' }
  | { readonly kind: 'abort' }
  | { readonly kind: 'error'; readonly error: unknown };

/** One row to decode: a prompt, how to sample, and callbacks that see every token. */
export interface EngineSequence {
  readonly promptIds: readonly number[];
  readonly sampling: Omit<RowSampling, 'allowedTokenIds'>;
  readonly seed: number;
  /** Restricts the next token (guided decoding); undefined allows every token. */
  allowedTokenIds?(): ArrayLike<number> | undefined;
  /** Sees each sampled token; returns true when the sequence is finished. */
  onToken(token: SampledToken): boolean;
  /** The engine ended the sequence (context full, client gone, failure). Never after onToken said done. */
  onEnd(end: EngineEnd): void;
}

export interface EngineStats {
  /** Prefill forward passes and the rows they held. */
  prefills: number;
  prefillRows: number;
  /** Decode steps (one token for every running row) and the rows they held in total. */
  decodeSteps: number;
  decodeRows: number;
  /** Decode steps by how many rows they held. */
  rowsPerStep: Record<number, number>;
  running: number;
  waiting: number;
}

interface Row {
  readonly sequence: EngineSequence;
  readonly rng: Rng;
  readonly entry: AdapterEntry | undefined;
  readonly signal: AbortSignal | undefined;
  generated: number;
  lastToken: number;
  done: boolean;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class ServeEngine {
  readonly registry: AdapterRegistry;
  private waiting: Row[] = [];
  /** Rows in batch order. */
  private running: Row[] = [];
  private readonly control: Array<() => Promise<void>> = [];
  private wake: (() => void) | undefined;
  private woken = false;
  private closed = false;
  private readonly loop: Promise<void>;
  private readonly counters: EngineStats = {
    prefills: 0,
    prefillRows: 0,
    decodeSteps: 0,
    decodeRows: 0,
    rowsPerStep: {},
    running: 0,
    waiting: 0,
  };

  constructor(
    private readonly runtime: DecodeRuntime,
    baseName: string,
    readonly options: EngineOptions,
  ) {
    this.registry = new AdapterRegistry(baseName);
    this.loop = this.run();
  }

  /**
   * Queues `sequences` on `model` (the base name, an adapter name, or undefined for the base model).
   * Throws a 404 ServeError for an unknown name; the adapter is leased until each sequence ends.
   */
  submit(model: string | undefined, sequences: readonly EngineSequence[], signal?: AbortSignal): void {
    if (this.closed) throw new ServeError('unavailable', 'the server is shutting down');
    const target = this.registry.resolve(model);
    const entry = target.kind === 'adapter' ? target.entry : undefined;
    for (const sequence of sequences) {
      if (entry) this.registry.lease(entry);
      this.waiting.push({
        sequence,
        rng: createRng(sequence.seed),
        entry,
        signal,
        generated: 0,
        lastToken: 0,
        done: false,
      });
    }
    this.notify();
  }

  /**
   * The logits at every position of `promptIds` under `model` (T × V), for vLLM's `prompt_logprobs`:
   * run between decode steps like an adapter load, the adapter leased meanwhile.
   */
  promptLogits(model: string | undefined, promptIds: readonly number[]): Promise<Float32Array> {
    const target = this.registry.resolve(model);
    const entry = target.kind === 'adapter' ? target.entry : undefined;
    if (entry) this.registry.lease(entry);
    return this.enqueue(() =>
      this.runtime.promptLogits({ prompt: promptIds, adapterKey: this.adapterKey(entry) }),
    ).finally(() => {
      if (entry && this.registry.release(entry)) this.runtime.removeAdapter(entry.key);
    });
  }

  /** The runtime key a row under `entry` decodes with; the base model under the fault hook. */
  private adapterKey(entry: AdapterEntry | undefined): string | null {
    if (!entry || this.options.fault === 'base-under-adapter-name') return null;
    return entry.key;
  }

  /** Loads a PEFT adapter directory as `name` (vLLM's /v1/load_lora_adapter), between decode steps. */
  loadAdapter(name: string, path: string, options: { inplace?: boolean } = {}): Promise<void> {
    return this.enqueue(async () => {
      if (name === this.registry.baseName) {
        throw new ServeError(
          'bad-request',
          `'${name}' is the base model's name; choose another adapter name`,
          'lora_name',
        );
      }
      if (this.registry.has(name) && !options.inplace) {
        throw new ServeError(
          'bad-request',
          `The lora adapter '${name}' has already been loaded.`,
          'lora_name',
        );
      }
      if (!existsSync(path) || !statSync(path).isDirectory()) {
        throw new ServeError('not-found', `No adapter found for ${path}: no such directory`, 'lora_path');
      }
      const key = this.registry.nextKey(name);
      try {
        await this.runtime.loadAdapter(key, path);
      } catch (cause) {
        // A worker that died is the server's trouble (503), not the adapter's.
        if (cause instanceof ServeError && cause.code === 'unavailable') throw cause;
        throw new ServeError(
          'bad-request',
          `cannot load adapter '${name}': ${errorMessage(cause)}`,
          'lora_path',
          {
            cause,
          },
        );
      }
      const previous = this.registry.publish({ name, key, path, created: Math.floor(Date.now() / 1000) });
      if (previous && previous.leases === 0) this.runtime.removeAdapter(previous.key);
    });
  }

  /** Stops serving adapter `name` (vLLM's /v1/unload_lora_adapter); running sequences finish on it. */
  unloadAdapter(name: string): Promise<void> {
    return this.enqueue(async () => {
      const entry = this.registry.retire(name);
      if (!entry)
        throw new ServeError('not-found', `The lora adapter '${name}' cannot be found.`, 'lora_name');
      if (entry.leases === 0) this.runtime.removeAdapter(entry.key);
    });
  }

  stats(): EngineStats {
    return {
      ...this.counters,
      rowsPerStep: { ...this.counters.rowsPerStep },
      running: this.running.length,
      waiting: this.waiting.length,
    };
  }

  /** Stops the loop, ends every sequence with a 503 and empties the batch (the runtime stays the caller's). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.notify();
    await this.loop;
    const error = new ServeError('unavailable', 'the server is shutting down');
    const rows = [...this.running, ...this.waiting];
    this.running = [];
    this.waiting = [];
    this.runtime.clear();
    for (const row of rows) {
      if (row.done) this.releaseLease(row);
      else this.end(row, { kind: 'error', error });
    }
    for (const op of this.control.splice(0)) void op();
  }

  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ServeError('unavailable', 'the server is shutting down'));
    return new Promise<T>((resolve, reject) => {
      this.control.push(() =>
        (this.closed
          ? Promise.reject(new ServeError('unavailable', 'the server is shutting down'))
          : op()
        ).then(resolve, reject),
      );
      this.notify();
    });
  }

  /** Wakes the loop if it idles, else makes its next idle check return at once (no lost wake-ups). */
  private notify(): void {
    const resolve = this.wake;
    this.wake = undefined;
    if (resolve) resolve();
    else this.woken = true;
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const op = this.control.shift();
      if (op) {
        await op();
        continue;
      }
      this.dropAborted();
      const joining = planAdmission(
        this.waiting.map((row) => row.sequence.promptIds.length),
        this.running.length,
        this.options,
      );
      try {
        if (joining > 0) await this.prefill(this.waiting.splice(0, joining));
        if (this.running.length > 0) await this.decode();
      } catch (error) {
        // A failed forward pass leaves the cache in an unknown state: fail the batch, keep serving.
        const rows = this.running;
        this.running = [];
        this.runtime.clear();
        for (const row of rows) {
          if (row.done) this.releaseLease(row);
          else this.end(row, { kind: 'error', error });
        }
      }
      if (this.running.length === 0 && this.waiting.length === 0 && this.control.length === 0) {
        if (!this.woken) {
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
        }
        this.woken = false;
      } else {
        // wasm's data() resolves as a microtask: without a macrotask turn here HTTP I/O (new
        // requests, SSE writes) would wait for the whole batch to finish.
        await yieldToEventLoop();
      }
    }
  }

  private async prefill(joining: Row[]): Promise<void> {
    this.running.push(...joining);
    const logits = await this.runtime.add(
      joining.map((row) => ({ prompt: row.sequence.promptIds, adapterKey: this.adapterKey(row.entry) })),
    );
    this.counters.prefills += 1;
    this.counters.prefillRows += joining.length;
    this.sample(logits, joining);
    this.sweep();
  }

  private async decode(): Promise<void> {
    const rows = this.running.length;
    const logits = await this.runtime.step(this.running.map((row) => row.lastToken));
    this.counters.decodeSteps += 1;
    this.counters.decodeRows += rows;
    this.counters.rowsPerStep[rows] = (this.counters.rowsPerStep[rows] ?? 0) + 1;
    this.sample(logits, this.running);
    this.sweep();
  }

  /** Samples row i of `rows` from the i-th V-sized slice of `logits`. */
  private sample(logits: Float32Array, rows: readonly Row[]): void {
    const vocab = this.runtime.config.vocabSize;
    rows.forEach((row, index) => {
      if (row.done) return;
      const sequence = row.sequence;
      let allowed: ArrayLike<number> | undefined;
      try {
        allowed = sequence.allowedTokenIds?.();
        if (allowed?.length === 0) throw new Error('guided decoding allows no token here');
      } catch (error) {
        this.end(row, { kind: 'error', error });
        return;
      }
      const token = sampleRow(
        logits.subarray(index * vocab, (index + 1) * vocab),
        { ...sequence.sampling, ...(allowed ? { allowedTokenIds: allowed } : {}) },
        row.rng,
      );
      row.generated += 1;
      row.lastToken = token.tokenId;
      let finished: boolean;
      try {
        finished = sequence.onToken(token);
      } catch (error) {
        this.end(row, { kind: 'error', error });
        return;
      }
      if (finished) {
        row.done = true;
      } else if (sequence.promptIds.length + row.generated >= this.options.maxModelLen) {
        this.end(row, { kind: 'length' });
      }
    });
  }

  /** Removes finished rows from the batch, then frees their leases (after: the batch held their adapter). */
  private sweep(): void {
    const kept: number[] = [];
    const finished: Row[] = [];
    for (const [index, row] of this.running.entries()) {
      if (row.done) finished.push(row);
      else kept.push(index);
    }
    if (finished.length === 0) return;
    this.runtime.retain(kept);
    this.running = kept.map((index) => this.running[index] as Row);
    for (const row of finished) this.releaseLease(row);
  }

  private dropAborted(): void {
    const aborted = (row: Row) => row.signal?.aborted === true;
    for (const row of this.waiting.filter(aborted)) this.end(row, { kind: 'abort' });
    this.waiting = this.waiting.filter((row) => !row.done);
    for (const row of this.running.filter(aborted)) this.end(row, { kind: 'abort' });
    this.sweep();
  }

  /** Ends a row from the engine's side; its lease is freed once it has left the batch (sweep). */
  private end(row: Row, end: EngineEnd): void {
    if (row.done) return;
    row.done = true;
    try {
      row.sequence.onEnd(end);
    } catch {
      // A listener's failure must not stop the loop that serves everyone else.
    }
    if (!this.running.includes(row)) this.releaseLease(row);
  }

  private releaseLease(row: Row): void {
    if (row.entry && this.registry.release(row.entry)) this.runtime.removeAdapter(row.entry.key);
  }
}
