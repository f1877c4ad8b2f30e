// Two real `edgerl train --once` processes on the same policy and store at once: one lineage (every
// published version descends from the one before it, the newest is the default), every consumed
// group is in it exactly once, and a trainer that finds the policy's lease held exits 3 saying who
// holds it, having trained and written nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServerUrl } from '../support/open-test-store.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { ledgerFaults, lineageGroups, openTrainerRig, type TrainerRig } from './support/trainer-processes.ts';

let rig: TrainerRig;

// The embedded store is one process at a time (db/drivers/dir-lock.ts), so two trainers sharing a
// store need a Postgres server: these run in the suite's server pass (EDGERL_TEST_DATABASE_URL).
describe.skipIf(!testServerUrl)('two trainers on one policy', () => {
  beforeAll(async () => {
    rig = await openTrainerRig(testServerUrl as string);
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });

  it('started together, they leave one lineage with every group in it once', async (context) => {
    const seeded = [await rig.seed(1), await rig.seed(2), await rig.seed(3)];
    const a = rig.train('a');
    const b = rig.train('b');
    const codes = [await a.exited, await b.exited];
    const outputs = [a.output(), b.output()];
    for (const [index, code] of codes.entries()) {
      // 0: trained (or found nothing left); 3: the other held the policy's lease.
      expect([0, 3], outputs[index]).toContain(code);
      if (code === 3)
        expect(outputs[index]).toMatch(/policy agent is being trained by .*; exiting without training/);
    }
    const ledger = await rig.ledger();
    const outcome = ledgerFaults(ledger, seeded);
    recordFaultOutcome(context, outcome);
    expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    const included = lineageGroups(ledger);
    expect(new Set(included).size).toBe(included.length);
    expect([...included].sort()).toEqual([...seeded].sort());
    expect(new Set(ledger.stepGroups).size).toBe(ledger.stepGroups.length);
    expect(ledger.groups.every((group) => group.status === 'trained' && group.owner === null)).toBe(true);
    expect(ledger.runs.every((run) => run.status === 'finished')).toBe(true);
  }, 240_000);

  it('the second, while the first holds the lease, exits 3 and changes nothing; the first finishes', async (context) => {
    const before = await rig.ledger();
    const seeded = await rig.seed(4);
    const first = rig.train('first', { pauseAt: 'trained' });
    await first.waitFor('paused at trained');
    const second = rig.train('second');
    expect(await second.exited, second.output()).toBe(3);
    expect(second.output()).toContain('is being trained by');
    const during = await rig.ledger();
    expect(during.versions).toEqual(before.versions);
    // Only the first trainer's run exists beside the earlier ones, and it is still running.
    expect(during.runs.slice(before.runs.length).map((run) => run.status)).toEqual(['running']);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(143);
    const after = await rig.ledger();
    expect(after.runs.at(-1)?.status).toBe('interrupted');
    expect(after.groups.find((group) => group.id === seeded)).toMatchObject({
      status: 'complete',
      owner: null,
    });
    // A trainer started now trains it onto the same lineage.
    const third = rig.train('third');
    expect(await third.exited, third.output()).toBe(0);
    const final = await rig.ledger();
    const outcome = ledgerFaults(final, [...lineageGroups(before), seeded]);
    recordFaultOutcome(context, outcome);
    expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    expect(lineageGroups(final)).toEqual([...lineageGroups(before), seeded]);
  }, 240_000);
});
