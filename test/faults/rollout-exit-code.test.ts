// Fault scenario: the real `edgerl rollout` process while the inference endpoint refuses the model
// (404, not retried): every episode ends `error`, and the command must say so and exit 1, not 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import { runRollout } from './support/run-rollout.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});

describe('edgerl rollout and infrastructure failures', () => {
  it('exits 1 naming how many episodes ended in error and the first reason', async () => {
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
  });

  it('exits 0 when every episode ended on its own', async () => {
    const run = await runRollout(h.edge.url, ['--env', 'multi-hop', '--groups', '1', '--size', '2']);
    expect(run.stdout).not.toContain('ended in error');
    expect(run.code).toBe(0);
  });
});
