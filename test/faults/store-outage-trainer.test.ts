// Fault scenario: the store unreachable under a real `edgerl train --continuous` process. The trainer
// reaches Postgres only through a TCP proxy (support/tcp-proxy.ts); the line is cut for about five
// seconds twice: while the trainer waits for groups (its poll fails), and in the middle of a cycle
// (paused after the optimiser step, released while cut, so checkpointing succeeds and registering the
// version fails). What it must do: keep running (cli/train/train-continuously.ts, wait-out-store.ts),
// finish the interrupted cycle's checkpoint once the store is back, train each group once, and on a
// SIGTERM that arrives while the line is cut a third time, end its run `interrupted` with every lease
// given back once the store returns within the grace.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServerUrl } from '../support/open-test-store.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';
import { ledgerFaults, lineageGroups, openTrainerRig, type TrainerRig } from './support/trainer-processes.ts';

/** How long each cut lasts: longer than a poll (2 s) and several retries, shorter than any lease. */
const cutMs = 5_000;

let rig: TrainerRig | undefined;
let proxy: TcpProxy | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, done: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}; trainer output:\n${output()}`);
    await sleep(200);
  }
}

// A connection to cut needs a server: the embedded store lives inside the trainer's own process.
describe.skipIf(!testServerUrl)('a continuous trainer when the store goes away', () => {
  beforeAll(async () => {
    rig = await openTrainerRig(testServerUrl as string);
    const direct = new URL(rig.databaseUrl);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  }, 120_000);
  afterAll(async () => {
    await proxy?.close();
    await rig?.close();
  });

  it('waits out a cut while idle and one mid-cycle, trains each group once, and ends interrupted on SIGTERM during a third', async (context) => {
    const opened = rig as TrainerRig;
    const line = proxy as TcpProxy;
    const proxied = new URL(opened.databaseUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(line.port);
    // The test server trusts local connections and never asks for it: a password only to look for in the logs.
    proxied.password = 'pw-never-logged';
    const goOn = join(opened.root, 'go-on');
    const trainer = opened.train('continuous', {
      continuous: true,
      databaseUrl: proxied.toString(),
      pauseAt: 'trained',
      env: { EDGERL_TRAIN_PAUSE_UNTIL: goOn },
      extra: [
        '--groups-per-step',
        '1',
        '--store-retry-seconds',
        '0.2',
        '--store-retry-cap-seconds',
        '1',
        // Room for the test to restore the line after the trainer starts waiting at exit.
        '--store-grace-seconds',
        '60',
      ],
    });
    await trainer.waitFor('continuous: a cycle whenever 1 complete group(s) wait');

    // 1. Idle: the poll meets the cut.
    await line.cut();
    await trainer.waitFor('waiting for the store');
    await sleep(cutMs);
    await line.restore();
    await trainer.waitFor('store reachable again');
    expect(trainer.child.exitCode, trainer.output()).toBeNull();

    // 2. Mid-cycle: the step is trained, then the store goes away before the version is registered.
    const first = await opened.seed(1);
    await trainer.waitFor('paused at trained until');
    await line.cut();
    await writeFile(goOn, '');
    await trainer.waitFor('cycle failed');
    await sleep(cutMs);
    await line.restore();
    const trained = async (groupIds: readonly string[]) =>
      (await opened.ledger()).groups.filter(
        (group) => groupIds.includes(group.id) && group.status === 'trained',
      ).length === groupIds.length;
    await until('the first group trained', () => trained([first]), trainer.output);
    expect(trainer.child.exitCode, trainer.output()).toBeNull();

    // 3. After the outages it goes on training what arrives.
    const second = await opened.seed(2);
    await until('the second group trained', () => trained([first, second]), trainer.output);

    // 4. Stopped while the store is away: ending the run and giving the leases back wait for it, within
    // --store-grace-seconds, and take once it is back.
    await line.cut();
    trainer.child.kill('SIGTERM');
    await trainer.waitFor('waiting for the store to end training run');
    await line.restore();
    expect(await trainer.exited, trainer.output()).toBe(0);
    const ledger = await opened.ledger();
    const outcome = ledgerFaults(ledger, [first, second]);
    recordFaultOutcome(context, outcome);
    expect(outcome, trainer.output()).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    expect(lineageGroups(ledger)).toEqual([first, second]);
    expect([...ledger.stepGroups].sort()).toEqual([first, second].sort());
    expect(ledger.runs.map((run) => run.status)).toEqual(['interrupted']);
    expect(ledger.heldPolicyLeases).toBe(0);
    // Each wait was one line, and none of them quoted the database URL's credentials.
    expect(trainer.output()).not.toContain('pw-never-logged');
  }, 300_000);
});
