// One worker thread running embedded-sandbox-worker.js, as request/reply promises. A worker that
// exits or fails rejects every pending request; terminate() is how the host stops a runaway query.
import { Worker } from 'node:worker_threads';
import { SqlStateError } from '../sandbox-error.ts';
import type { SessionField, SessionResult } from '../sandbox-session.ts';

export interface SandboxWorkerData {
  readonly dump?: ArrayBuffer;
  readonly username?: string;
  readonly textTypeIds: readonly number[];
}

type Reply =
  | { kind: 'ready' }
  | { kind: 'reply'; id: number; fields?: SessionField[]; rows?: unknown[][]; dump?: ArrayBuffer }
  | { kind: 'failed'; id: number; code?: string; message: string };

type Request =
  | { op: 'exec'; sql: string }
  | { op: 'query'; sql: string; params: readonly unknown[] }
  | { op: 'dump' };

/** The worker stopped (exited, crashed, or was terminated) with requests outstanding. */
export class SandboxWorkerGone extends Error {
  override readonly name = 'SandboxWorkerGone';
}

const entry = new URL('./embedded-sandbox-worker.js', import.meta.url);

export class SandboxWorker {
  private readonly pending = new Map<
    number,
    { resolve: (reply: Reply) => void; reject: (error: Error) => void }
  >();
  private nextId = 1;
  private gone: Error | undefined;

  private constructor(private readonly worker: Worker) {}

  /** Starts a worker and waits until its PGlite is open. */
  static start(data: SandboxWorkerData): Promise<SandboxWorker> {
    const transfer = data.dump ? [data.dump] : [];
    const worker = new Worker(entry, { workerData: data, transferList: transfer });
    const handle = new SandboxWorker(worker);
    return new Promise((resolve, reject) => {
      const onReady = (reply: Reply) => {
        if (reply.kind !== 'ready') return;
        worker.off('message', onReady);
        worker.on('message', (message: Reply) => handle.settle(message));
        resolve(handle);
      };
      worker.on('message', onReady);
      worker.once('error', (error) => {
        handle.stop(error);
        reject(error);
      });
      worker.once('exit', (code) => {
        const error = new SandboxWorkerGone(`the sandbox worker exited (code ${code})`);
        handle.stop(error);
        reject(error);
      });
    });
  }

  async exec(sql: string): Promise<void> {
    await this.request({ op: 'exec', sql });
  }

  async query(sql: string, params: readonly unknown[]): Promise<SessionResult> {
    const reply = await this.request({ op: 'query', sql, params });
    return reply.kind === 'reply'
      ? { fields: reply.fields ?? [], rows: reply.rows ?? [] }
      : { fields: [], rows: [] };
  }

  async dump(): Promise<ArrayBuffer> {
    const reply = await this.request({ op: 'dump' });
    if (reply.kind !== 'reply' || !reply.dump) throw new Error('the sandbox worker sent no dump');
    return reply.dump;
  }

  /** Stops the thread at once, whatever it is running (WebAssembly included). */
  async terminate(): Promise<void> {
    this.stop(new SandboxWorkerGone('the sandbox worker was stopped'));
    await this.worker.terminate();
  }

  get alive(): boolean {
    return this.gone === undefined;
  }

  private request(message: Request): Promise<Reply> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }

  private settle(reply: Reply): void {
    if (reply.kind === 'ready') return;
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if (reply.kind === 'failed') {
      // The driver's SQLSTATE travels as `code`, as PGlite's own error has it.
      waiter.reject(reply.code ? new SqlStateError(reply.code, reply.message) : new Error(reply.message));
    } else {
      waiter.resolve(reply);
    }
  }

  private stop(error: Error): void {
    this.gone ??= error;
    for (const waiter of this.pending.values()) waiter.reject(this.gone);
    this.pending.clear();
  }
}
