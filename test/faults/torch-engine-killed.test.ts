// `kill -9` in the middle of a torch engine's optimiser step (EDGERL_TORCH_PAUSE_IN_STEP holds the
// engine after its first micro-batch): of the engine process, the trainer's cycle fails with
// engine-exited, publishes nothing and hands its groups back, and the next run trains them once; of the
// trainer, its engine dies with it (no process left holding the model), and the next run from the
// same output directory trains the groups once. Runs on a Postgres server, like the other trainer
// process scenarios; needs the torch engine (`npm run setup:torch`, or EDGERL_TORCH_PYTHON).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServerUrl } from '../support/open-test-store.ts';
import { testEngineKind, torchAvailable, torchPython } from '../support/test-engine.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { ledgerFaults, lineageGroups, openTrainerRig, type TrainerRig } from './support/trainer-processes.ts';

let rig: TrainerRig;
// With EDGERL_TEST_ENGINE=torch every trainer already runs on torch.
const torch = () =>
  testEngineKind() === 'torch' ? [] : ['--engine', 'torch', '--torch-python', torchPython()];
const pauseInStep = { EDGERL_TORCH_PAUSE_IN_STEP: '1' };

/** Whether process `pid` is alive (signal 0 checks without signalling). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

function enginePid(output: string): number {
  const match = /torch engine \(pid (\d+)\)/.exec(output);
  if (!match) throw new Error(`the trainer never named its engine's pid:\n${output}`);
  return Number(match[1]);
}

// Skipped without a server (the embedded store is one process at a time) and, outside CI, without the
// torch engine set up (EDGERL_TEST_TORCH=required makes that a failure).
describe.skipIf(!testServerUrl || !torchAvailable())('a torch engine killed mid-step', () => {
  beforeAll(async () => {
    rig = await openTrainerRig(testServerUrl as string);
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });

  it('fails the cycle (nothing published, groups back); the next run trains them once', async (context) => {
    const groupId = await rig.seed(1);
    const run = rig.train('engine-killed', { extra: torch(), env: pauseInStep });
    await run.waitFor('paused in step');
    const pid = enginePid(run.output());
    process.kill(pid, 'SIGKILL');
    expect(await run.exited, run.output()).not.toBe(0);
    expect(run.output()).toMatch(/the torch engine \(pid \d+\) was killed by SIGKILL/);
    const midway = await rig.ledger();
    expect(midway.versions.map((version) => `${version.name}:${version.status}`)).toEqual([
      'agent@0:published',
    ]);
    expect(midway.stepGroups).toEqual([]);
    expect(midway.groups).toEqual([{ id: groupId, status: 'complete', owner: null }]);

    const next = rig.train('engine-killed', { extra: torch() });
    expect(await next.exited, next.output()).toBe(0);
    const ledger = await rig.ledger();
    const outcome = ledgerFaults(ledger, [groupId]);
    recordFaultOutcome(context, outcome);
    expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    expect(lineageGroups(ledger)).toEqual([groupId]);
    expect(ledger.stepGroups).toEqual([groupId]);
  }, 240_000);

  it('takes its engine down when the trainer is killed; the next run trains the group once', async (context) => {
    const groupId = await rig.seed(2);
    const run = rig.train('trainer-killed', { extra: torch(), env: pauseInStep });
    await run.waitFor('paused in step');
    const pid = enginePid(run.output());
    run.child.kill('SIGKILL');
    await run.exited;
    // PR_SET_PDEATHSIG: the engine gets SIGKILL when its parent dies, whatever it is doing.
    const gone = await until(() => !alive(pid), 10_000);

    const next = rig.train('trainer-killed', { extra: torch() });
    expect(await next.exited, next.output()).toBe(0);
    const ledger = await rig.ledger();
    const outcome = ledgerFaults(ledger, [groupId]);
    recordFaultOutcome(context, { ...outcome, leaks: outcome.leaks + (gone ? 0 : 1) });
    expect(gone, `engine ${pid} outlived its trainer`).toBe(true);
    expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    expect(ledger.stepGroups.filter((id) => id === groupId)).toEqual([groupId]);
  }, 240_000);
});
