// Fault scenario: the real `edgerl rollout` process while the inference endpoint refuses the model
// (404, not retried): every episode ends `error`, and the command must say so and exit 1, not 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import {
  countEpisodeFaults,
  storedTrajectoryIds,
  trajectoriesSince,
} from './support/count-episode-faults.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { runRollout } from './support/run-rollout.ts';

/** Counts the trajectories the test's rollout stored; a failed episode keeps its turns and ends. */
async function countRollout(before: ReadonlySet<string>, delivered: number) {
  return countEpisodeFaults(h.store, {
    trajectoryIds: await trajectoriesSince(h.store, before),
    replies: h.double.completions - delivered,
  });
}

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});

describe('edgerl rollout and infrastructure failures', () => {
  it('exits 1 naming how many episodes ended in error and the first reason', async (context) => {
    const before = await storedTrajectoryIds(h.store);
    const delivered = h.double.completions;
    const missing = {
      kind: 'status',
      status: 404,
      body: { error: { message: 'model not served' } },
    } as const;
    h.double.fail(missing, missing, missing);
    const run = await runRollout(h.edge.url, ['--env', 'multi-hop', '--groups', '1', '--size', '3']);
    expect(run.stderr).toBe('');
    const groupId = /started group ([0-9a-f-]{36})/.exec(run.stdout)?.[1] as string;
    const { trajectories } = await h.store.getGroup({ groupId });
    expect(trajectories.map((t) => t.status)).toEqual(['error', 'error', 'error']);
    const line = run.stdout.split('\n').find((text) => text.includes('ended in error'));
    expect(line).toBe(
      `3 of 3 episode(s) ended in error (not the model's doing: they are left out of training); the first: ${trajectories[0]?.errorReason}`,
    );
    expect(trajectories[0]?.errorReason).toMatch(/404/);
    expect(run.code).toBe(1);
    const { outcome, found } = await countRollout(before, delivered);
    recordFaultOutcome(context, outcome);
    expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
  });

  it('exits 0 when every episode ended on its own', async (context) => {
    const before = await storedTrajectoryIds(h.store);
    const delivered = h.double.completions;
    const run = await runRollout(h.edge.url, ['--env', 'multi-hop', '--groups', '1', '--size', '2']);
    expect(run.stdout).not.toContain('ended in error');
    expect(run.code).toBe(0);
    const { outcome, found } = await countRollout(before, delivered);
    recordFaultOutcome(context, outcome);
    expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
  });
});
