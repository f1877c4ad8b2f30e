// Rollout admission (edge/rollouts/admit-episodes.ts): POST /v1/rollouts and POST /v1/groups answer
// 429 `backlog-full` with Retry-After past this edge's queue bound or the policy's bound on episodes
// in flight, and a refused request writes nothing. The app on a real store; episodes are not run (the
// dispatcher keeps them), so what is queued stays queued.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../edge/app.ts';
import { environments } from '../../edge/environments/environments.ts';
import type { EdgeBacklog } from '../../edge/rollouts/admit-episodes.ts';
import type { EpisodeMessage } from '../../edge/rollouts/episode-message.ts';
import { sharedStoreProvider } from '../../edge/store-provider.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

const key = 'admission-test-key';

function app(options: {
  maxQueuedPerEdge?: number;
  maxQueuedPerPolicy?: number;
  backlog?: () => EdgeBacklog;
}) {
  const dispatched: EpisodeMessage[] = [];
  const edge = createApp({
    stores: sharedStoreProvider(testStore.store),
    environments,
    dispatcher: { dispatch: async (messages) => void dispatched.push(...messages) },
    upstream: { baseUrl: 'http://127.0.0.1:9/v1', requestTokenIds: true, timeoutMs: 1000 },
    apiKeys: [key],
    defaultModel: 'tiny-base',
    limits: {
      ...(options.maxQueuedPerEdge !== undefined ? { maxQueuedPerEdge: options.maxQueuedPerEdge } : {}),
      ...(options.maxQueuedPerPolicy !== undefined ? { maxQueuedPerPolicy: options.maxQueuedPerPolicy } : {}),
    },
    ...(options.backlog ? { backlog: options.backlog } : {}),
  });
  const post = (path: string, json: unknown) =>
    edge.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
  return { post, dispatched };
}

describe('admission per edge', () => {
  it('refuses a group that would pass the queue bound, with Retry-After from the measured pace', async () => {
    // 10 waiting, bound 12: a group of 2 fits, a group of 4 does not (excess 2).
    const backlog = { queued: 10, concurrency: 4, meanEpisodeMs: 6_000 };
    const { post, dispatched } = app({ maxQueuedPerEdge: 12, backlog: () => backlog });
    expect((await post('/v1/rollouts', { env: 'multi-hop', groupSize: 2 })).status).toBe(202);
    const refused = await post('/v1/rollouts', { env: 'multi-hop', groupSize: 4 });
    expect(refused.status).toBe(429);
    // 2 episodes must end first, at 4 at once of 6 s each: 2 × 6 / 4 = 3 s.
    expect(refused.headers.get('retry-after')).toBe('3');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('backlog-full');
    expect(body.error.message).toContain('bound of 12 (EDGERL_EDGE_MAX_QUEUED_EPISODES)');
    expect(dispatched).toHaveLength(2);
  });

  it('admits any group when nothing is queued, even one larger than the bound', async () => {
    const { post } = app({
      maxQueuedPerEdge: 2,
      backlog: () => ({ queued: 0, concurrency: 1, meanEpisodeMs: undefined }),
    });
    expect((await post('/v1/rollouts', { env: 'multi-hop', groupSize: 8 })).status).toBe(202);
  });
});

describe('admission per policy', () => {
  it('counts the policy’s episodes in flight in the store, refuses past the bound and writes nothing', async () => {
    const policy = await testStore.store.createPolicy({ name: 'admitted', baseModel: 'tiny-adm' });
    const v0 = await testStore.store.registerPolicyVersion({ policyId: policy.id });
    await testStore.store.publishPolicyVersion({ versionId: v0.id, makeDefault: true });
    const { post } = app({ maxQueuedPerPolicy: 6 });
    for (let n = 0; n < 3; n++) {
      expect(
        (await post('/v1/rollouts', { env: 'multi-hop', groupSize: 2, policy: 'admitted' })).status,
      ).toBe(202);
    }
    expect(await testStore.store.countQueuedEpisodes({ policyVersionId: v0.id })).toBe(6);
    // A client's trajectory (the recording proxy's, no lease) is the client's pace: not counted.
    await testStore.store.startTrajectory({
      env: 'multi-hop',
      policyVersionId: v0.id,
      metadata: { model: 'tiny-adm' },
    });
    expect(await testStore.store.countQueuedEpisodes({ policyVersionId: v0.id })).toBe(6);
    const groupsBefore = (await testStore.store.listGroups({ limit: 1000 })).length;
    const refused = await post('/v1/rollouts', { env: 'multi-hop', groupSize: 1, policy: 'admitted' });
    expect(refused.status).toBe(429);
    // No measured pace (no backlog in this app): 1 episode × 30 s assumed / 1 = 30 s.
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'EDGERL_POLICY_MAX_QUEUED_EPISODES',
    );
    expect((await testStore.store.listGroups({ limit: 1000 })).length).toBe(groupsBefore);
    // Another policy is not held back by this one's backlog.
    const other = await testStore.store.createPolicy({ name: 'admitted-other', baseModel: 'tiny-adm2' });
    const w0 = await testStore.store.registerPolicyVersion({ policyId: other.id });
    await testStore.store.publishPolicyVersion({ versionId: w0.id, makeDefault: true });
    expect(
      (await post('/v1/rollouts', { env: 'multi-hop', groupSize: 1, policy: 'admitted-other' })).status,
    ).toBe(202);
    // At its bound (6 of 6), not past it: a group for outside agents (which queues nothing) is admitted.
    expect((await post('/v1/groups', { env: 'multi-hop', groupSize: 2, policy: 'admitted' })).status).toBe(
      201,
    );
  });

  it('refuses POST /v1/groups while the policy is past its bound', async () => {
    const policy = await testStore.store.createPolicy({ name: 'crowded', baseModel: 'tiny-crowd' });
    const v0 = await testStore.store.registerPolicyVersion({ policyId: policy.id });
    await testStore.store.publishPolicyVersion({ versionId: v0.id, makeDefault: true });
    // A first group is always admitted when nothing is in flight: 4 in flight against a bound of 2.
    expect(
      (
        await app({ maxQueuedPerPolicy: 2 }).post('/v1/rollouts', {
          env: 'multi-hop',
          groupSize: 4,
          policy: 'crowded',
        })
      ).status,
    ).toBe(202);
    const refused = await app({ maxQueuedPerPolicy: 2 }).post('/v1/groups', {
      env: 'multi-hop',
      groupSize: 2,
      policy: 'crowded',
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
  });
});
