// One worker thread that answers requests, for the pools that run TensorFlow.js off the main thread
// (the trainer's gradient workers, serve-model's decode workers): each thread has its own backend and
// its own copy of the model. The thread runs boot-worker.js, which imports `entry`. Both sides speak
// a small envelope: the thread posts {kind: 'ready'} once it has loaded, {kind: 'done', id, …} per
// request, {kind: 'failed', id, message} when a request (or, with id null, the start) failed, and
// any other message is an event for the owner. A thread that exits or crashes rejects its start and
// every request still pending with the owner's error, so nothing waits on a thread that is gone.
// An idle thread does not keep the process alive. Node only.
import { Worker } from 'node:worker_threads';

export interface ThreadRequest {
  readonly id: number;
}

export interface ThreadDone {
  readonly kind: 'done';
  readonly id: number;
}

export type ThreadFailed = { readonly kind: 'failed'; readonly id: number | null; readonly message: string };

/** Everything a thread may post: its start, a request's end, or an event of the owner's protocol. */
export type ThreadMessage<Done extends ThreadDone, Event> =
  | { readonly kind: 'ready' }
  | Done
  | ThreadFailed
  | Event;

/** How the owner names a thread's failures: `died` (exit, crash, terminate) or `failed` (it reported). */
export type ThreadErrorFactory = (kind: 'died' | 'failed', message: string) => Error;

export interface WorkerThreadOptions<Event> {
  /** The TypeScript module the thread imports (an href). */
  readonly entry: string;
  /** The rest of workerData, next to `entry`. */
  readonly data: object;
  /** Prefix of every error message, e.g. "decode worker 1". */
  readonly label: string;
  readonly error: ThreadErrorFactory;
  readonly onEvent?: (event: Event) => void;
  /** Called once when the thread is gone (after its pending requests were rejected). */
  readonly onGone?: (error: Error) => void;
}

const boot = new URL('./boot-worker.js', import.meta.url);

interface Pending<Done> {
  readonly resolve: (done: Done) => void;
  readonly reject: (error: Error) => void;
}

export class WorkerThread<Request extends ThreadRequest, Done extends ThreadDone, Event = never> {
  readonly ready: Promise<void>;
  readonly #worker: Worker;
  readonly #options: WorkerThreadOptions<Event>;
  readonly #pending = new Map<number, Pending<Done>>();
  #gone: Error | undefined;

  constructor(options: WorkerThreadOptions<Event>) {
    this.#options = options;
    this.#worker = new Worker(boot, { workerData: { ...options.data, entry: options.entry } });
    this.ready = new Promise<void>((resolve, reject) => {
      this.#worker.on('message', (message: ThreadMessage<Done, Event>) => {
        const kind = (message as { kind?: unknown }).kind;
        if (kind === 'ready') {
          this.#idle();
          resolve();
        } else if (kind === 'done') {
          this.#settle((message as Done).id)?.resolve(message as Done);
        } else if (kind === 'failed') {
          const failed = message as ThreadFailed;
          const error = options.error('failed', `${options.label}: ${failed.message}`);
          if (failed.id === null) {
            this.#stop(error);
            reject(error);
          } else this.#settle(failed.id)?.reject(error);
        } else {
          options.onEvent?.(message as Event);
        }
      });
      this.#worker.once('error', (error) => {
        const gone = options.error('died', `${options.label} crashed: ${error.message}`);
        this.#stop(gone);
        reject(gone);
      });
      this.#worker.once('exit', (code) => {
        const gone = options.error('died', `${options.label} exited (code ${code})`);
        this.#stop(gone);
        reject(gone);
      });
    });
    // An unhandled rejection of `ready` would end the process; callers await it and see the error.
    this.ready.catch(() => undefined);
  }

  get alive(): boolean {
    return this.#gone === undefined;
  }

  /** Requests still unanswered. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Posts `request`; resolves with the thread's `done` for its id. The thread answers in order. */
  request(request: Request, transfer: readonly ArrayBuffer[] = []): Promise<Done> {
    if (this.#gone) return Promise.reject(this.#gone);
    if (this.#pending.has(request.id)) {
      return Promise.reject(new Error(`${this.#options.label}: request ${request.id} is already pending`));
    }
    return new Promise<Done>((resolve, reject) => {
      this.#pending.set(request.id, { resolve, reject });
      // Held while it works: an awaited request must keep the process alive.
      this.#worker.ref();
      this.#worker.postMessage(request, [...transfer]);
    });
  }

  /** Stops the thread at once, whatever it runs: the same end for its requests as a crash. */
  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }

  #settle(id: number): Pending<Done> | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#idle();
    return pending;
  }

  /** An idle thread does not keep the process alive (a session left open still lets it exit). */
  #idle(): void {
    this.#worker.unref();
  }

  #stop(error: Error): void {
    if (this.#gone) return;
    this.#gone = error;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) request.reject(error);
    this.#options.onGone?.(error);
  }
}
