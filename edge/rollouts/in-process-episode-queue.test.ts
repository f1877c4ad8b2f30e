import { describe, expect, it } from 'vitest';
import { type EpisodeMessage, episodeMessage } from './episode-message.ts';
import { InProcessEpisodeQueue } from './in-process-episode-queue.ts';

const message = (n: number): EpisodeMessage =>
  episodeMessage(
    '00000000-0000-4000-8000-000000000000',
    `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  );

describe('InProcessEpisodeQueue', () => {
  it('never runs more than `concurrency` at once and runs every message', async () => {
    let running = 0;
    let peak = 0;
    const ran: string[] = [];
    const queue = new InProcessEpisodeQueue({
      concurrency: 3,
      async run(entry) {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        ran.push(entry.trajectoryId);
        return true;
      },
    });
    await queue.dispatch(Array.from({ length: 10 }, (_, n) => message(n)));
    await queue.idle();
    expect(peak).toBe(3);
    expect(ran.sort()).toEqual(Array.from({ length: 10 }, (_, n) => message(n).trajectoryId).sort());
  });

  it('keeps a moving mean of run times for admission: the first run, then 0.1 of each difference', async () => {
    let clock = 0;
    const durations = [100, 200];
    const queue = new InProcessEpisodeQueue({
      concurrency: 1,
      now: () => clock,
      async run() {
        clock += durations.shift() ?? 0;
        return true;
      },
    });
    expect(queue.meanRunMs).toBeUndefined();
    await queue.dispatch([message(1), message(2)]);
    await queue.idle();
    // 100, then 100 + 0.1 × (200 − 100) = 110.
    expect(queue.meanRunMs).toBe(110);
  });

  it('delivers a message again until it is acknowledged, counting attempts from 1', async () => {
    const attempts: number[] = [];
    const delays: number[] = [];
    const queue = new InProcessEpisodeQueue({
      concurrency: 1,
      async run(_entry, attempt) {
        attempts.push(attempt);
        return attempt === 3;
      },
      retryDelayMs: (attempt) => {
        delays.push(attempt);
        return 1;
      },
    });
    await queue.dispatch([message(1)]);
    await queue.idle();
    expect(attempts).toEqual([1, 2, 3]);
    expect(delays).toEqual([2, 3]);
  });

  it('cancels running work on close and refuses new messages', async () => {
    let aborted = false;
    const queue = new InProcessEpisodeQueue({
      concurrency: 1,
      run: (_entry, _attempt, signal) =>
        new Promise<boolean>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(true);
          });
        }),
    });
    await queue.dispatch([message(1), message(2)]);
    expect(queue.size).toEqual({ pending: 1, running: 1, retrying: 0 });
    await queue.close();
    expect(aborted).toBe(true);
    expect(queue.size).toEqual({ pending: 0, running: 0, retrying: 0 });
    await expect(queue.dispatch([message(3)])).rejects.toThrow(/closed/);
  });
});
