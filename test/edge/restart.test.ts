// Stopping the Node edge mid-rollout and starting it again on the same store: running episodes are
// cut short but left `running` (not failed) with their leases handed back, and the new edge, by
// default and on either store, takes them over and dispatches them again; each resumes from its
// stored turns and the group completes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdge } from '../../edge/runtime/node.ts';
import { type InferenceDouble, startInferenceDouble } from './support/inference-double.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let double: InferenceDouble;
let testStore: TestStore;
beforeAll(async () => {
  double = await startInferenceDouble();
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
  await double?.close();
});

const config = () => ({
  upstream: { baseUrl: double.baseUrl, requestTokenIds: true, timeoutMs: 10_000 },
  apiKeys: ['k'],
  defaultModel: 'tiny-base',
  episodeConcurrency: 4,
  policyTimeoutMs: 10_000,
});

describe('restarting the Node edge', () => {
  it('leaves interrupted episodes running and resumes them on the next start', async () => {
    const store = testStore.store;
    double.delayMs = 150;
    const first = await startEdge({ config: config(), port: 0, store, resumeUnfinished: false });
    const response = await fetch(`${first.url}/v1/rollouts`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ env: 'multi-hop', groupSize: 2, taskSeed: 9 }),
    });
    const { groupId, trajectoryIds } = (await response.json()) as {
      groupId: string;
      trajectoryIds: string[];
    };
    // Let the episodes get going (the opening turns and a first policy call), then stop the edge.
    await new Promise((resolve) => setTimeout(resolve, 250));
    await first.close();
    const interrupted = await Promise.all(trajectoryIds.map((id) => store.getTrajectory(id)));
    for (const { trajectory, turns } of interrupted) {
      expect(trajectory.status).toBe('running');
      expect(turns.length).toBeGreaterThanOrEqual(2);
    }
    // Handed back by the clean stop (by the database clock): free for any runner at once.
    const held = await store.sql.query(
      'select count(*)::int from trajectories where id = any($1::uuid[]) and lease_expires_at > now()',
      [trajectoryIds],
    );
    expect(held.rows[0]?.[0]).toBe(0);
    double.delayMs = 0;
    const second = await startEdge({ config: config(), port: 0, store });
    try {
      expect(second.resumed).toBe(2);
      await second.queue.idle();
    } finally {
      await second.close();
    }
    const { group, trajectories } = await store.getGroup({ groupId, includeTurns: true });
    expect(group.status).toBe('complete');
    for (const trajectory of trajectories) {
      expect(trajectory.status).toBe('finished');
      expect(trajectory.verifierReward).toBe(1);
      // What the first edge wrote is still there, unchanged, at the start of the finished episode.
      const before = interrupted.find((entry) => entry.trajectory.id === trajectory.id)?.turns ?? [];
      expect(trajectory.turns?.slice(0, before.length)).toEqual(before);
      expect(trajectory.turns?.map((turn) => turn.index)).toEqual(trajectory.turns?.map((_, index) => index));
    }
  });
});
