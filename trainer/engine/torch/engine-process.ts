// The torch engine's child process: `python -m edgerl_torch` with the engine's package on PYTHONPATH,
// frames over its stdin and stdout (frames.ts), its stderr forwarded line by line to the trainer's
// log. Requests go one at a time, in order, as the engine serves them. When the child exits (a kill,
// an out-of-memory kill, a crash) every waiting request fails with engine-exited, naming how it
// ended and its last log lines; the trainer's cycle then fails and resumes from its checkpoint.
// Leaves out what the operations mean (torch-engine.ts).
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { EngineError, engineErrorCode } from '../engine-error.ts';
import { encodeFrame, type Frame, FrameReader, type WireTensor } from './frames.ts';

export interface EngineProcessOptions {
  readonly python: string;
  /** Arguments after `-m edgerl_torch`. */
  readonly args: readonly string[];
  /** PYTHONPATH entry that holds the edgerl_torch package. */
  readonly packageDir: string;
  readonly log: (line: string) => void;
}

export interface Reply {
  readonly result: Record<string, unknown>;
  readonly tensors: Readonly<Record<string, WireTensor>>;
}

type EventHandler = (event: string, data: Record<string, unknown>) => void;

interface Waiting {
  readonly id: number;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: unknown) => void;
  readonly onEvent?: EventHandler;
}

/** How many of the child's last stderr lines an engine-exited error quotes. */
const keptLogLines = 12;

export class EngineProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #reader = new FrameReader();
  readonly #recentLog: string[] = [];
  #waiting: Waiting | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #exit: EngineError | undefined;
  readonly exited: Promise<void>;

  private constructor(child: ChildProcessWithoutNullStreams, python: string, log: (line: string) => void) {
    this.#child = child;
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.#logLine(line, log);
    });
    child.stdout.on('data', (chunk: Buffer) => this.#onData(chunk));
    // Writes after the child died fail with EPIPE: the exit handler reports it, not this.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      const fail = (why: string) => {
        if (partial) this.#logLine(partial, log);
        partial = '';
        this.#exit ??= new EngineError(
          'engine-exited',
          `the torch engine (pid ${child.pid ?? '?'}) ${why}${this.#recentLog.length > 0 ? `; its last log lines:\n${this.#recentLog.join('\n')}` : ''}`,
        );
        this.#waiting?.reject(this.#exit);
        this.#waiting = undefined;
        resolve();
      };
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'EACCES') {
          this.#exit = new EngineError(
            'engine-setup',
            `cannot run the torch engine's Python ${python} (${error.code}): run \`npm run setup:torch\`, or pass --torch-python PATH (EDGERL_TORCH_PYTHON) naming a Python with torch, transformers, peft and safetensors`,
          );
        }
        fail(`could not run: ${error.message}`);
      });
      child.on('exit', (code, signal) =>
        fail(signal ? `was killed by ${signal}` : `exited with status ${code}`),
      );
    });
  }

  static start(options: EngineProcessOptions): EngineProcess {
    const pythonPath = [options.packageDir, process.env.PYTHONPATH].filter(Boolean).join(':');
    const child = spawn(options.python, ['-m', 'edgerl_torch', ...options.args], {
      env: { ...process.env, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new EngineProcess(child, options.python, options.log);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Whether the child has exited (or could not start): every request now fails. */
  get hasExited(): boolean {
    return this.#exit !== undefined;
  }

  /** Sends one request; resolves with the reply, rejects with its EngineError (or engine-exited). */
  request(
    op: string,
    args: Record<string, unknown> = {},
    tensors: Readonly<Record<string, WireTensor>> = {},
    onEvent?: EventHandler,
  ): Promise<Reply> {
    const run = this.#queue.then(
      () =>
        new Promise<Reply>((resolve, reject) => {
          if (this.#exit) {
            reject(this.#exit);
            return;
          }
          const id = this.#nextId++;
          this.#waiting = { id, resolve, reject, ...(onEvent ? { onEvent } : {}) };
          this.#child.stdin.write(encodeFrame({ id, op, args }, tensors));
        }),
    );
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Asks the engine to exit, and kills it if it has not within `graceMs`. */
  async close(graceMs = 10_000): Promise<void> {
    if (!this.#exit) {
      await Promise.race([
        this.request('shutdown').catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, graceMs).unref()),
      ]);
      this.#child.stdin.end();
    }
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    timer.unref();
    await this.exited;
    clearTimeout(timer);
  }

  /** Kills the engine at once (a failed start, a test). */
  kill(): void {
    this.#child.kill('SIGKILL');
  }

  #logLine(line: string, log: (line: string) => void): void {
    if (line.trim() === '') return;
    this.#recentLog.push(line);
    if (this.#recentLog.length > keptLogLines) this.#recentLog.shift();
    log(`torch: ${line}`);
  }

  #onData(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.#reader.push(chunk);
    } catch (error) {
      this.#exit = new EngineError(
        'engine-bad-frame',
        `the torch engine wrote a broken frame: ${(error as Error).message}`,
      );
      this.#child.kill('SIGKILL');
      return;
    }
    for (const frame of frames) this.#onFrame(frame);
  }

  #onFrame({ header, tensors }: Frame): void {
    const waiting = this.#waiting;
    if (!waiting || header.id !== waiting.id) {
      this.#exit = new EngineError(
        'engine-bad-frame',
        `the torch engine answered request ${String(header.id)}, none of which is waiting`,
      );
      this.#child.kill('SIGKILL');
      return;
    }
    if (typeof header.event === 'string') {
      waiting.onEvent?.(header.event, (header.data ?? {}) as Record<string, unknown>);
      return;
    }
    this.#waiting = undefined;
    if (header.ok === true) {
      waiting.resolve({ result: (header.result ?? {}) as Record<string, unknown>, tensors });
      return;
    }
    const error = (header.error ?? {}) as { code?: unknown; message?: unknown };
    waiting.reject(
      new EngineError(engineErrorCode(error.code), `torch engine: ${String(error.message ?? 'no message')}`),
    );
  }
}
