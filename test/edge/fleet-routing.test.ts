// Replica-aware routing against a real store and two inference doubles as replicas: the router's
// choice (only `ready` replicas for an adapter, every replica for other names, rotation, the cache,
// an unreachable replica tried last), and the episode loop's fleet client and the proxy's fleet fetch
// failing over on a dropped connection and on a 404 (which quarantines the replica in the store).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { FleetPolicyClient } from '../../edge/policy/fleet-policy-client.ts';
import type { PolicyRequest } from '../../edge/policy/policy-client.ts';
import { PolicyError } from '../../edge/policy/policy-error.ts';
import { fleetFetch } from '../../edge/routing/fleet-fetch.ts';
import { ReplicaRouter } from '../../edge/routing/replica-router.ts';
import { startEdge } from '../../edge/runtime/node.ts';
import { uniqueName } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';
import { type InferenceDouble, startInferenceDouble } from './support/inference-double.ts';

let testStore: TestStore;
let store: Store;
let a: InferenceDouble;
let b: InferenceDouble;
/** A replica nobody listens on (port 9 is discard; nothing answers HTTP there). */
const c = 'http://127.0.0.1:9/v1';

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
  [a, b] = await Promise.all([startInferenceDouble(), startInferenceDouble()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await testStore?.close();
});

/** A published trained version with a `ready` row on each of `ready`. */
async function versionReadyOn(ready: readonly string[]): Promise<{ adapterName: string; versionId: string }> {
  const policy = await store.createPolicy({ name: uniqueName('routed'), baseModel: 'tiny' });
  const version = await store.registerPolicyVersion({ policyId: policy.id, adapterUri: '/adapters/1' });
  await store.publishPolicyVersion({ versionId: version.id });
  for (const replica of ready)
    await store.recordPublication({ versionId: version.id, replica, state: 'ready' });
  return { adapterName: version.adapterName, versionId: version.id };
}

function request(model: string): PolicyRequest {
  return {
    model,
    messages: [{ role: 'user', content: 'What is the value of key "ab"?' }],
    tools: [],
    temperature: 0,
    maxTokens: 8,
    signal: AbortSignal.timeout(10_000),
  };
}

describe('ReplicaRouter', () => {
  it('offers an adapter only where it is ready, rotating; other names everywhere; nothing when none holds it', async () => {
    const fleet = [a.baseUrl, b.baseUrl, c];
    const router = new ReplicaRouter({ replicas: fleet, cacheMs: 1000 }, () => 0);
    const picker = router.forStore(store);
    const held = await versionReadyOn([c, a.baseUrl, 'http://elsewhere:8000/v1']);
    // Fleet order, this edge's replicas only, rotated by one per request.
    expect((await picker.choose(held.adapterName)).replicas).toEqual([a.baseUrl, c]);
    expect((await picker.choose(held.adapterName)).replicas).toEqual([c, a.baseUrl]);
    expect((await picker.choose('tiny')).replicas).toHaveLength(3);
    const unheld = await versionReadyOn([]);
    expect(await picker.choose(unheld.adapterName)).toEqual({ versionId: unheld.versionId, replicas: [] });
  });

  it('reuses what it read for cacheMs, and tries a replica that refused connections last for a while', async () => {
    let now = 0;
    const router = new ReplicaRouter(
      { replicas: [a.baseUrl, b.baseUrl], cacheMs: 1000, downMs: 5000 },
      () => now,
    );
    const picker = router.forStore(store);
    const held = await versionReadyOn([a.baseUrl]);
    expect((await picker.choose(held.adapterName)).replicas).toEqual([a.baseUrl]);
    await store.recordPublication({ versionId: held.versionId, replica: b.baseUrl, state: 'ready' });
    now = 999;
    expect((await picker.choose(held.adapterName)).replicas).toEqual([a.baseUrl]);
    now = 1000;
    const both = (await picker.choose(held.adapterName)).replicas;
    expect([...both].sort()).toEqual([a.baseUrl, b.baseUrl].sort());
    picker.unreachable(a.baseUrl);
    for (const _ of [1, 2])
      expect((await picker.choose(held.adapterName)).replicas).toEqual([b.baseUrl, a.baseUrl]);
    now = 1000 + 5000;
    expect((await picker.choose(held.adapterName)).replicas).toContain(a.baseUrl);
  });
});

describe('failover over the fleet', () => {
  it('the policy client passes over a dropped connection and a 404, and quarantines the replica that lost the adapter', async () => {
    const held = await versionReadyOn([a.baseUrl, b.baseUrl]);
    // A fresh router rotates from the first replica: call 1 tries a then b, call 2 b then a.
    const router = new ReplicaRouter({ replicas: [a.baseUrl, b.baseUrl], cacheMs: 0, downMs: 0 });
    const client = new FleetPolicyClient({ picker: router.forStore(store), requestTokenIds: true });
    a.fail({ kind: 'drop' });
    expect((await client.complete(request(held.adapterName))).replica).toBe(b.baseUrl);
    b.fail({ kind: 'status', status: 404, body: { error: { message: `The model does not exist.` } } });
    const second = await client.complete(request(held.adapterName));
    expect(second.replica).toBe(a.baseUrl);
    expect(second.completionTokenIds?.length).toBeGreaterThan(0);
    const rows = await store.listPublications({ versionId: held.versionId });
    expect(rows.map((row) => [row.replica, row.state, row.lastError?.slice(0, 20) ?? null])).toEqual(
      [
        [a.baseUrl, 'ready', null],
        [b.baseUrl, 'quarantined', `edge: 404 for ${held.adapterName}`.slice(0, 20)],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
  });

  it('refuses, as a retryable 503, a version no replica holds, and sends it nowhere', async () => {
    const unheld = await versionReadyOn([]);
    const router = new ReplicaRouter({ replicas: [a.baseUrl, b.baseUrl], cacheMs: 0 });
    const client = new FleetPolicyClient({ picker: router.forStore(store) });
    const calls = a.requests.length + b.requests.length;
    const error = await client.complete(request(unheld.adapterName)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PolicyError);
    expect(error).toMatchObject({ code: 'http', status: 503 });
    expect(a.requests.length + b.requests.length).toBe(calls);
  });

  it("the proxy's fleet fetch fails over the same way and passes the last replica's answer through", async () => {
    const held = await versionReadyOn([c, b.baseUrl]);
    const router = new ReplicaRouter({ replicas: [c, b.baseUrl], cacheMs: 0, downMs: 0 });
    const send = fleetFetch(router.forStore(store));
    const init = () => ({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: held.adapterName, messages: [{ role: 'user', content: 'hi' }] }),
    });
    // Call 1 tries c (refused) then b, call 2 b first.
    for (const _ of [1, 2]) {
      const answer = await send(held.adapterName, init());
      expect([answer.response.status, answer.replica]).toEqual([200, b.baseUrl]);
    }
    b.fail({ kind: 'status', status: 404, body: { error: { message: 'gone' } } });
    // Call 3: c refused and b, the last to try, answered 404: the client gets b's answer as it was.
    const last = await send(held.adapterName, init());
    expect([last.response.status, last.replica]).toEqual([404, b.baseUrl]);
    expect(await last.response.json()).toEqual({ error: { message: 'gone' } });
    // b lost the adapter: quarantined though it was the last to try.
    const rows = await store.listPublications({ versionId: held.versionId });
    expect(rows.find((row) => row.replica === b.baseUrl)?.state).toBe('quarantined');
  });
});

describe('the edge over a fleet', () => {
  it('refuses with 503 a rollout on a version no replica holds, and runs one on a version a replica holds there only', async () => {
    const held = await versionReadyOn([a.baseUrl]);
    const unheld = await versionReadyOn([]);
    const edge = await startEdge({
      config: {
        upstream: { baseUrl: a.baseUrl, requestTokenIds: true, timeoutMs: 10_000 },
        fleet: { replicas: [a.baseUrl, b.baseUrl], cacheMs: 0 },
        apiKeys: ['k'],
        episodeConcurrency: 2,
        policyTimeoutMs: 10_000,
      },
      port: 0,
      store,
      resumeUnfinished: false,
    });
    try {
      const post = (policy: string) =>
        fetch(`${edge.url}/v1/rollouts`, {
          method: 'POST',
          headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
          body: JSON.stringify({ env: 'multi-hop', groupSize: 2, policy }),
        });
      const refused = await post(unheld.adapterName);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({
        error: { code: 'unavailable', message: expect.stringMatching(/is ready on no inference replica/) },
      });
      const [fromA, fromB] = [a.requests.length, b.requests.length];
      const started = await post(held.adapterName);
      expect(started.status).toBe(202);
      await edge.queue.idle();
      expect(a.requests.length).toBeGreaterThan(fromA);
      expect(b.requests.length).toBe(fromB);
      const { trajectoryIds } = (await started.json()) as { trajectoryIds: string[] };
      for (const id of trajectoryIds) {
        const { trajectory, turns } = await store.getTrajectory(id);
        expect(trajectory.status).toBe('finished');
        for (const turn of turns.filter((t) => t.role === 'assistant'))
          expect(turn.metadata?.replica).toBe(a.baseUrl);
      }
    } finally {
      await edge.close();
    }
  });
});
