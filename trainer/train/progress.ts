// What the trainer prints while it works: on a terminal, one bar redrawn in place per step
// (micro-batches done, tokens/s); elsewhere (cron, logs), plain lines only. Both print the same
// one-line summary per step and every cycle event. Leaves out the figures themselves (run-cycle.ts).
import { redactSecrets } from '../../protocol/redact-secrets.ts';

export interface Progress {
  /** A line for people: claims, scores, publication, errors. */
  line(text: string): void;
  /** A micro-batch finished: `done` of `total`, `tokens` processed so far in the step. */
  microBatch(step: number, done: number, total: number, tokens: number, seconds: number): void;
  /** The step ended; `summary` is its one-line record. */
  stepEnd(step: number, summary: string): void;
}

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export function createProgress(stream: ProgressStream): Progress {
  const tty = stream.isTTY === true;
  let drawn = false;
  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  return {
    line(text) {
      clear();
      // Lines quote errors (a publish failure, a replica's URL): credentials never reach the log.
      stream.write(`${redactSecrets(text)}\n`);
    },
    microBatch(step, done, total, tokens, seconds) {
      if (!tty) return;
      const width = 24;
      const filled = Math.round((done / Math.max(1, total)) * width);
      const rate = seconds > 0 ? Math.round(tokens / seconds) : 0;
      const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
      stream.write(
        `\r\x1b[2Kstep ${step} [${bar}] ${done}/${total} micro-batches · ${rate.toLocaleString('en-US')} tok/s`,
      );
      drawn = true;
    },
    stepEnd(_step, summary) {
      clear();
      stream.write(`${summary}\n`);
    },
  };
}

/** A Progress that prints nothing (tests, library use). */
export const silentProgress: Progress = { line() {}, microBatch() {}, stepEnd() {} };
