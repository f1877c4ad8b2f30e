// `kill -9` of a real `edgerl train --once` holding the policy's lease: until the lease expires
// another trainer exits 3; after it, the next trainer takes the lease over, marks the dead trainer's
// run `interrupted`, trains its group once, and publishes on the same lineage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServerUrl } from '../support/open-test-store.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { ledgerFaults, lineageGroups, openTrainerRig, type TrainerRig } from './support/trainer-processes.ts';

let rig: TrainerRig;
const leaseSeconds = 10; // the trainer's smallest (train-config.ts)

// The embedded store is one process at a time (db/drivers/dir-lock.ts): a second trainer running
// while the first one's lease is live needs a Postgres server (EDGERL_TEST_DATABASE_URL).
describe.skipIf(!testServerUrl)('a trainer killed holding the policy lease', () => {
  beforeAll(async () => {
    rig = await openTrainerRig(testServerUrl as string);
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });

  it('is taken over after expiry; its run ends interrupted and its group is trained once', async (context) => {
    const groupId = await rig.seed(1);
    const dead = rig.train('dead', { pauseAt: 'trained', leaseSeconds });
    await dead.waitFor('paused at trained');
    dead.child.kill('SIGKILL');
    await dead.exited;
    const killedAt = Date.now();
    const [deadRun] = (await rig.ledger()).runs;
    expect(deadRun?.status).toBe('running');

    const early = rig.train('early', { leaseSeconds });
    expect(await early.exited, early.output()).toBe(3);
    expect(Date.now() - killedAt).toBeLessThan(leaseSeconds * 1000);

    await new Promise((resolve) => setTimeout(resolve, leaseSeconds * 1000 - (Date.now() - killedAt) + 500));
    const next = rig.train('next', { leaseSeconds });
    expect(await next.exited, next.output()).toBe(0);
    expect(next.output()).toContain('marked 1 training run(s) interrupted');

    const ledger = await rig.ledger();
    const outcome = ledgerFaults(ledger, [groupId]);
    recordFaultOutcome(context, outcome);
    expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    expect(ledger.runs.find((run) => run.id === deadRun?.id)?.status).toBe('interrupted');
    expect(ledger.runs.filter((run) => run.id !== deadRun?.id).map((run) => run.status)).toEqual([
      'finished',
    ]);
    expect(lineageGroups(ledger)).toEqual([groupId]);
    expect(ledger.stepGroups).toEqual([groupId]);
    expect(ledger.groups).toEqual([{ id: groupId, status: 'trained', owner: null }]);
  }, 240_000);
});
