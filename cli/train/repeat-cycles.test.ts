import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CycleReport } from '../../trainer/train/cycle-state.ts';
import { storeWaitSettingsSchema } from '../../trainer/train/store-wait-settings.ts';
import { repeatCycles } from './repeat-cycles.ts';

function collect(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

const refused = () =>
  new Error('Failed query: select 1\nparams: ', {
    cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
  });

describe('repeatCycles (--every) when the store is unreachable', () => {
  it('waits the store out, reloads the lineage once it answers, and runs the next cycle at once', async () => {
    const stdout = collect();
    const stderr = collect();
    const events: string[] = [];
    let reloads = 0;
    let cycles = 0;
    const code = await repeatCycles(
      async () => {
        cycles += 1;
        events.push(`cycle ${cycles}`);
        if (cycles === 1) throw refused();
        // The second cycle is the last: the first signal stops the loop after the current cycle.
        process.emit('SIGINT', 'SIGINT');
        return { kind: 'idle', stale: 0 } as unknown as CycleReport;
      },
      // An hour between cycles: the test ends only if the cycle after the outage does not wait for it.
      3_600_000,
      stdout.stream,
      stderr.stream,
      {
        settings: storeWaitSettingsSchema.parse({ retrySeconds: 0.01, retryCapSeconds: 0.02 }),
        reload: async () => {
          reloads += 1;
          events.push(`reload ${reloads}`);
          if (reloads < 3) throw refused();
        },
      },
    );
    expect(code).toBe(0);
    expect(events).toEqual(['cycle 1', 'reload 1', 'reload 2', 'reload 3', 'cycle 2']);
    const lines = stderr.text().trim().split('\n');
    expect(lines[0]).toBe(
      'edgerl train: cycle failed: store unreachable (connect ECONNREFUSED 127.0.0.1:5432)',
    );
    expect(
      lines.filter((line) => line.includes('waiting for the store to reload the last checkpoint')),
    ).toHaveLength(2);
    expect(stderr.text()).not.toContain('Failed query');
  });
});
