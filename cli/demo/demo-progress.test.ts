// The demo's progress output on a fake terminal (isTTY, a clock the test moves) and on a plain stream:
// the bar's counts and ETA (elapsed × remaining / done, by hand below), lines printed above the bar,
// and a warm start's 800 step summaries thinned to one per tenth off a terminal.
import { describe, expect, it } from 'vitest';
import { createDemoProgress, formatSeconds } from './demo-progress.ts';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return {
    writes,
    stream: { isTTY, columns: 120, write: (text: string) => writes.push(text) },
    /** What a terminal shows: each \r\x1b[2K clears the line being drawn. */
    screen: () =>
      writes
        .join('')
        .split('\n')
        .map((line) => line.split('\r\x1b[2K').at(-1) ?? ''),
  };
}

describe('createDemoProgress on a terminal', () => {
  it('redraws one bar with counts, elapsed time and ETA, and prints lines above it', () => {
    let now = 0;
    const out = fakeStream(true);
    const progress = createDemoProgress(out.stream, () => now);
    const bar = progress.bar('RL', { unit: 'rounds', total: 16 });
    now = 30_000;
    bar.update(4, 16, 'round 5: rollouts 32/64');
    // 30 s for 4 rounds: 12 left take 90 s.
    expect(out.screen().at(-1)).toBe(
      'RL [#####---------------] 4/16 rounds · round 5: rollouts 32/64 · 30 s, ETA 90 s',
    );
    progress.line('round 4/16: success 70.0%');
    const screen = out.screen();
    expect(screen.at(-2)).toBe('round 4/16: success 70.0%');
    expect(screen.at(-1)).toMatch(/^RL \[#####-+\] 4\/16 rounds/);
    now = 120_000;
    bar.update(16, 16);
    bar.end('RL done');
    expect(out.screen().slice(-2)).toEqual(['RL done', '']);
  });

  it('counts trainer steps on a step-counting bar without printing each', () => {
    let now = 0;
    const out = fakeStream(true);
    const progress = createDemoProgress(out.stream, () => now);
    progress.bar('warm start', { unit: 'steps', total: 800, countsSteps: true });
    for (let step = 1; step <= 200; step++) {
      now = step * 350;
      progress.stepEnd(step, `step ${step} · loss 0.5`);
    }
    progress.microBatch(201, 1, 2, 300, 0.1);
    const screen = out.screen();
    // Only the bar: no step line was printed. 70 s for 200 steps: 600 left take 210 s.
    expect(screen).toHaveLength(1);
    expect(screen[0]).toBe(
      'warm start [#####---------------] 200/800 steps · step 201: 1/2 micro-batches · 70 s, ETA 3 min 30 s',
    );
  });

  it('cuts a bar to the terminal width', () => {
    const out = fakeStream(true);
    const progress = createDemoProgress({ ...out.stream, columns: 41 }, () => 0);
    progress.bar('a long phase name', { unit: 'episodes', total: 100 }).update(1, 100, 'x'.repeat(50));
    expect(out.screen().at(-1)).toHaveLength(40);
  });

  it('assumes 100 columns when the terminal reports none', () => {
    const out = fakeStream(true);
    const progress = createDemoProgress({ ...out.stream, columns: 0 }, () => 0);
    progress.bar('phase', { unit: 'episodes', total: 100 }).update(1, 100, 'x'.repeat(200));
    expect(out.screen().at(-1)).toHaveLength(99);
  });
});

describe('createDemoProgress off a terminal', () => {
  it('writes no bar, only lines, and one step summary per tenth with its ETA', () => {
    let now = 0;
    const out = fakeStream(false);
    const progress = createDemoProgress(out.stream, () => now);
    const bar = progress.bar('warm start', { unit: 'steps', total: 800, countsSteps: true });
    for (let step = 1; step <= 800; step++) {
      now = step * 100;
      progress.stepEnd(step, `step ${step}`);
    }
    bar.end();
    progress.bar('A/B evaluation', { unit: 'episodes', total: 200 }).update(100, 200);
    progress.line('done');
    const text = out.writes.join('');
    expect(text).not.toContain('\r');
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(11);
    // Step 80 at 8 s: 720 steps left take 72 s.
    expect(lines[0]).toBe('step 80 (80/800, ETA 72 s)');
    expect(lines[9]).toBe('step 800 (800/800)');
    expect(lines[10]).toBe('done');
  });

  it('prints a GRPO step summary (a bar that does not count steps) as a line', () => {
    const out = fakeStream(false);
    const progress = createDemoProgress(out.stream, () => 0);
    progress.bar('RL', { unit: 'rounds', total: 2 });
    progress.stepEnd(801, 'step 801 · loss 0.1');
    expect(out.writes.join('')).toBe('step 801 · loss 0.1\n');
  });
});

describe('formatSeconds', () => {
  it('shows seconds below two minutes, minutes and seconds above', () => {
    expect([0, 42.4, 119.6, 185, 3600].map(formatSeconds)).toEqual([
      '0 s',
      '42 s',
      '2 min 00 s',
      '3 min 05 s',
      '60 min 00 s',
    ]);
  });
});
