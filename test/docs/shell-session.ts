// One bash for a whole docs page, fed its commands one at a time as a person types them into a terminal:
// `export`, `cd` and `&` jobs carry over from one command to the next, and `kill %2` / `wait %2` name
// the jobs the page started. Each command's output is read up to a sentinel line the shell prints after
// it, with its exit status. Background jobs share the shell's output, so their lines can land in a
// foreground command's output; `transcript()` keeps everything for failure messages.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';

export interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/** How long the jobs left at the end get to stop on SIGTERM (an edge closing its store) before SIGKILL. */
const stopGraceMs = 15_000;

export class ShellSession {
  readonly #shell: ChildProcessByStdio<Writable, Readable, Readable>;
  readonly #exited: Promise<unknown>;
  #stdout = '';
  #stderr = '';
  #transcript = '';
  #exitCode: number | null | undefined;
  #onOutput: (() => void) | undefined;

  /** `prelude` runs first (shell options); the shell has its own process group, which holds its jobs. */
  constructor(options: { cwd: string; env: NodeJS.ProcessEnv; prelude: string }) {
    this.#shell = spawn('bash', ['--noprofile', '--norc', '-s'], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const take = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (stream === 'stdout') this.#stdout += text;
      else this.#stderr += text;
      this.#transcript += text;
      this.#onOutput?.();
    };
    this.#shell.stdout.on('data', take('stdout'));
    this.#shell.stderr.on('data', take('stderr'));
    // A write after the shell died (a command ran `exit`) is reported by run(), not thrown here.
    this.#shell.stdin.on('error', () => {});
    // The shell may exit (a command ran `exit`) while a server it started still holds its output open:
    // a command waiting on it learns at 'exit'; close() waits for 'close', when the last job is gone too.
    this.#shell.on('exit', (code) => {
      this.#exitCode = code;
      this.#onOutput?.();
    });
    this.#exited = new Promise((done) => this.#shell.on('close', done));
    this.#shell.stdin.write(`${options.prelude}\n`);
  }

  /**
   * Runs one command (stdin from /dev/null, so it cannot swallow the next one) and resolves with its exit
   * status and what it printed. Past `timeoutMs` the whole session is killed: the page has failed.
   */
  run(command: string, timeoutMs: number): Promise<Outcome> {
    const token = `__docs_test_${randomUUID().replaceAll('-', '')}`;
    const statusLine = new RegExp(`\\n?${token} (\\d+)\\n`);
    const errorLine = new RegExp(`\\n?${token}\\n`);
    this.#stdout = '';
    this.#stderr = '';
    if (this.#exitCode !== undefined) {
      return Promise.resolve({
        code: this.#exitCode,
        stdout: '',
        stderr: 'the shell has exited',
        timedOut: false,
      });
    }
    // The command goes in a brace group on lines of its own: a trailing comment or `&` stays its own.
    this.#shell.stdin.write(
      `{ ${command}\n} < /dev/null\nprintf '\\n%s %s\\n' ${token} "$?"\nprintf '\\n%s\\n' ${token} >&2\n`,
    );
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.#onOutput = undefined;
        this.#kill('SIGKILL');
        done({ code: null, stdout: this.#stdout, stderr: this.#stderr, timedOut: true });
      }, timeoutMs);
      this.#onOutput = () => {
        const status = statusLine.exec(this.#stdout);
        const errorEnd = errorLine.exec(this.#stderr);
        if (status && errorEnd) {
          clearTimeout(timer);
          this.#onOutput = undefined;
          done({
            code: Number(status[1]),
            stdout: this.#stdout.slice(0, status.index),
            stderr: this.#stderr.slice(0, errorEnd.index),
            timedOut: false,
          });
        } else if (this.#exitCode !== undefined) {
          clearTimeout(timer);
          this.#onOutput = undefined;
          done({
            code: this.#exitCode,
            stdout: this.#stdout,
            stderr: `${this.#stderr}\n(the shell exited)`,
            timedOut: false,
          });
        }
      };
      this.#onOutput();
    });
  }

  /** Everything the shell and its jobs printed, in order, without the sentinel lines. */
  transcript(): string {
    return this.#transcript.replace(/^__docs_test_\w+( \d+)?\n/gm, '');
  }

  /**
   * Stops the shell and every job still running: SIGTERM to its process group (servers close their stores),
   * SIGKILL after a grace period. Resolves once the last of them has closed the shell's output.
   */
  async close(): Promise<void> {
    this.#kill('SIGTERM');
    const grace = setTimeout(() => this.#kill('SIGKILL'), stopGraceMs);
    await this.#exited;
    clearTimeout(grace);
  }

  #kill(signal: NodeJS.Signals): void {
    if (this.#shell.pid === undefined) return;
    try {
      process.kill(-this.#shell.pid, signal);
    } catch {
      // The group is already gone.
    }
  }
}
