// What the demo prints while it works: on a terminal, one bar per phase redrawn in place, with the
// phase's counts, elapsed time and an ETA (elapsed × remaining / done, once something is done);
// elsewhere (a log, `npm run bench:learn`), plain lines only: each phase's lines, and for a phase that
// counts optimiser steps (the warm start's 800) one step summary per tenth instead of every one. It is
// also the trainer's Progress, so the trainer's own lines go through it. Leaves out what a phase does.
import type { Progress, ProgressStream } from '../../trainer/train/progress.ts';

export interface PhaseBar {
  /** `done` of `total` units (fractions allowed: a round half done); `detail` follows the counts. */
  update(done: number, total: number, detail?: string): void;
  /** Removes the bar; `summary` is printed as a line. */
  end(summary?: string): void;
}

export interface BarOptions {
  readonly unit: string;
  readonly total: number;
  /** Each trainer step summary (stepEnd) counts one unit, and is shown on the bar rather than printed. */
  readonly countsSteps?: boolean;
}

export interface DemoProgress extends Progress {
  /** Starts the phase's bar (one at a time: a new one ends the previous). */
  bar(label: string, options: BarOptions): PhaseBar;
}

export function createDemoProgress(
  stream: ProgressStream,
  now: () => number = () => performance.now(),
): DemoProgress {
  const tty = stream.isTTY === true;
  let active: ActiveBar | undefined;
  let drawn = false;

  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  const draw = () => {
    if (!tty || !active) return;
    // A pseudo-terminal may report 0 columns: then assume a common width.
    const columns = stream.columns !== undefined && stream.columns > 0 ? stream.columns : 100;
    const width = Math.max(40, columns - 1);
    stream.write(`\r\x1b[2K${renderBar(active, now(), width)}`);
    drawn = true;
  };
  const print = (text: string) => {
    clear();
    stream.write(`${text}\n`);
    draw();
  };

  return {
    line: print,
    microBatch(step, done, total) {
      if (!active) return;
      active.note = `step ${step}: ${done}/${total} micro-batches`;
      draw();
    },
    stepEnd(_step, summary) {
      const bar = active;
      if (!bar?.countsSteps) return print(summary);
      bar.done += 1;
      bar.note = '';
      // A tenth of the phase's steps, and its last, get their summary as a plain line.
      const every = Math.max(1, Math.ceil(bar.total / 10));
      if (!tty && (bar.done % every === 0 || bar.done === bar.total))
        print(`${summary} (${bar.done}/${bar.total}${etaText(bar, now())})`);
      else draw();
    },
    bar(label, options) {
      if (active) clear();
      const bar: ActiveBar = {
        label,
        unit: options.unit,
        total: options.total,
        done: 0,
        detail: '',
        note: '',
        countsSteps: options.countsSteps === true,
        started: now(),
      };
      active = bar;
      draw();
      return {
        update(done, total, detail) {
          if (active !== bar) return;
          bar.done = done;
          bar.total = total;
          bar.detail = detail ?? '';
          bar.note = '';
          draw();
        },
        end(summary) {
          if (active === bar) {
            clear();
            active = undefined;
          }
          if (summary !== undefined) print(summary);
        },
      };
    },
  };
}

interface ActiveBar {
  readonly label: string;
  readonly unit: string;
  total: number;
  done: number;
  detail: string;
  /** The trainer's latest micro-batch count, until the next update. */
  note: string;
  readonly countsSteps: boolean;
  readonly started: number;
}

/** `label [#####-----] 3/8 rounds · detail · 12 s, ETA 20 s`, cut to `width` columns. */
export function renderBar(bar: ActiveBar, at: number, width: number): string {
  const cells = 20;
  const fraction = bar.total > 0 ? Math.min(1, Math.max(0, bar.done / bar.total)) : 0;
  const filled = Math.round(fraction * cells);
  const counts = `${Math.floor(bar.done)}/${bar.total} ${bar.unit}`;
  const parts = [`${bar.label} [${'#'.repeat(filled)}${'-'.repeat(cells - filled)}] ${counts}`];
  for (const extra of [bar.detail, bar.note]) if (extra) parts.push(extra);
  parts.push(`${formatSeconds((at - bar.started) / 1000)}${etaText(bar, at)}`);
  const text = parts.join(' · ');
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function etaText(bar: Pick<ActiveBar, 'done' | 'total' | 'started'>, at: number): string {
  if (!(bar.done > 0) || bar.done >= bar.total) return '';
  const elapsed = (at - bar.started) / 1000;
  return `, ETA ${formatSeconds((elapsed * (bar.total - bar.done)) / bar.done)}`;
}

/** `42 s` under two minutes, `3 min 05 s` above. */
export function formatSeconds(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 120) return `${whole} s`;
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
}
