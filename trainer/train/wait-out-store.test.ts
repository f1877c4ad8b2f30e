import { describe, expect, it } from 'vitest';
import { StoreWaitExceededError, type StoreWait, waitOutStore } from './wait-out-store.ts';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

/** A clock that only the waits advance, and the waits and log lines it saw. */
function harness(overrides: Partial<StoreWait> = {}) {
  let clock = 0;
  const waits: number[] = [];
  const lines: string[] = [];
  const options: StoreWait = {
    baseDelayMs: 1000,
    maxDelayMs: 4000,
    maxWaitMs: null,
    stopping: () => false,
    wait: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
    log: (line) => lines.push(line),
    what: 'look for complete groups',
    now: () => clock,
    // The top of each jitter range: the waits are the caps themselves.
    random: () => 1,
    ...overrides,
  };
  return { options, waits, lines };
}

describe('waitOutStore', () => {
  it('retries an unreachable store with doubling, capped waits, one line each, then returns the value', async () => {
    const { options, waits, lines } = harness();
    let calls = 0;
    const result = await waitOutStore(async () => {
      calls += 1;
      if (calls <= 4) throw new Error('Failed query: select 1\nparams: x', { cause: refused() });
      return 7;
    }, options);
    expect(result).toEqual({ kind: 'done', value: 7 });
    // min(4000, 1000·2^(n−1)) for n = 1..4: 1000, 2000, 4000, 4000.
    expect(waits).toEqual([1000, 2000, 4000, 4000]);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe(
      'store unreachable (connect ECONNREFUSED 127.0.0.1:5432); waiting for the store to look for complete groups: try 2 in 1.0 s, unreachable for 0.0 s',
    );
    expect(lines[4]).toBe('store reachable again after 11.0 s: look for complete groups, done');
  });

  it('throws any other error at once', async () => {
    const { options, waits } = harness();
    const conflict = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(waitOutStore(() => Promise.reject(conflict), options)).rejects.toBe(conflict);
    expect(waits).toEqual([]);
  });

  it('gives up after maxWaitMs with the store still down, the last wait cut to fit', async () => {
    const { options, waits } = harness({ maxWaitMs: 5000 });
    const error = await waitOutStore(() => Promise.reject(refused()), options).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(StoreWaitExceededError);
    expect((error as Error).message).toBe(
      'gave up waiting for the store to look for complete groups: unreachable for 5.0 s (connect ECONNREFUSED 127.0.0.1:5432)',
    );
    expect(waits).toEqual([1000, 2000, 2000]);
  });

  it('stops waiting when the caller is stopping', async () => {
    let stopping = false;
    const { options, waits } = harness({
      stopping: () => stopping,
      wait: async (ms) => {
        waits.push(ms);
        stopping = true;
      },
    });
    expect(await waitOutStore(() => Promise.reject(refused()), options)).toEqual({ kind: 'stopped' });
    expect(waits).toEqual([1000]);
  });

  it('masks credentials in the reason it logs', async () => {
    const { options, lines } = harness();
    let calls = 0;
    await waitOutStore(async () => {
      calls += 1;
      if (calls === 1)
        throw Object.assign(new Error('Connection terminated: postgres://app:hunter2@db/app'), {});
    }, options);
    expect(lines[0]).toContain('postgres://app:***@db/app');
    expect(lines.join('\n')).not.toContain('hunter2');
  });
});
