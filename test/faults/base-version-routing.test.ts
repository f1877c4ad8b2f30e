// Fault scenario: a rollout on a policy's base version (`p@0`, created the way the trainer creates it)
// run by the real `edgerl rollout` process. An endpoint serves the base weights under the base
// model's name only (vLLM and serve-model answer 404 to `p@0`), so every call must use that name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import {
  countEpisodeFaults,
  storedTrajectoryIds,
  trajectoriesSince,
} from './support/count-episode-faults.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { runRollout } from './support/run-rollout.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});

describe('a rollout on a base version', () => {
  it('reaches the endpoint with the base model name and records the base version', async (context) => {
    const baseModel = 'Tiny/Base-Instruct';
    // As the trainer's ensurePolicy does: version 0 is the base weights, published and default.
    const policy = await h.store.createPolicy({ name: 'based', baseModel });
    const base = await h.store.registerPolicyVersion({
      policyId: policy.id,
      adapterName: 'based@0',
      metadata: { base: true },
    });
    await h.store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
    const calls = h.double.requests.length;
    const before = await storedTrajectoryIds(h.store);
    const delivered = h.double.completions;

    const run = await runRollout(h.edge.url, [
      '--env',
      'multi-hop',
      '--groups',
      '1',
      '--size',
      '2',
      '--policy',
      'based@0',
    ]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(`(2 × multi-hop, model ${baseModel})`);
    expect(run.stdout).toMatch(/: complete, mean verifier reward 1\.000 over 2\n/);
    expect(run.code).toBe(0);

    const models = new Set(h.double.requests.slice(calls).map((request) => request.body.model));
    expect(models).toEqual(new Set([baseModel]));
    const groupId = /started group ([0-9a-f-]{36})/.exec(run.stdout)?.[1] as string;
    const { trajectories } = await h.store.getGroup({ groupId });
    expect(trajectories.map((t) => [t.status, t.policyVersionId])).toEqual([
      ['finished', base.id],
      ['finished', base.id],
    ]);

    // A trained version (an adapter) still goes by its adapter name.
    const trained = await h.store.registerPolicyVersion({
      policyId: policy.id,
      adapterUri: '/adapters/based-1',
    });
    await h.store.publishPolicyVersion({ versionId: trained.id, makeDefault: true });
    const started = await h.api('/v1/rollouts', {
      json: { env: 'multi-hop', groupSize: 1, policy: 'based' },
    });
    expect(await started.json()).toMatchObject({ model: 'based@1', policyVersionId: trained.id });
    await h.edge.queue.idle();

    const { outcome, found } = await countEpisodeFaults(h.store, {
      trajectoryIds: await trajectoriesSince(h.store, before),
      replies: h.double.completions - delivered,
    });
    recordFaultOutcome(context, outcome);
    expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
  });
});
