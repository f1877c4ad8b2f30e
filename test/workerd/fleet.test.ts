// EDGERL_INFERENCE_REPLICAS in workerd: the Worker sends a trained version only to the replicas the store says
// hold it (`publications` rows `ready`), on both of its paths: the queue consumer's episodes (the fleet
// policy client) and the recording proxy (the fleet fetch). A replica that answers 404 for a version it
// was ready for is quarantined there, and a version no replica holds is refused before anything is
// recorded. The replicas are two inference doubles of this file's own (global-setup.ts), so their call
// counts are this file's; the Node side of the same rules is test/edge/fleet-routing.test.ts.
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { multiHop } from '../../edge/environments/multi-hop.ts';
import { episodeMessage } from '../../edge/rollouts/episode-message.ts';
import worker, { type WorkerEnv } from '../../edge/runtime/worker.ts';
import { openWorkerdTestStore } from './neon-test-store.ts';

const context = inject('workerd');
const [a, b] = context.replicaBaseUrls;
const fleetEnv: WorkerEnv = {
  ...(env as unknown as WorkerEnv),
  EDGERL_INFERENCE_REPLICAS: `${a},${b}`,
  // A quarantine reaches routing at the next call.
  EDGERL_FLEET_CACHE_MS: '1',
};
const key = 'workerd-test-key';

/** Completions each replica has answered so far. */
async function answered(): Promise<[number, number]> {
  const count = async (baseUrl: string) =>
    (
      (await (await fetch(`${baseUrl.replace(/\/v1$/, '')}/__control/stats`)).json()) as {
        completions: number;
      }
    ).completions;
  return [await count(a), await count(b)];
}

/**
 * A request to the Worker configured with the fleet, read whole before the request's context is waited
 * on (a streamed reply is pumped from that context and waits for its reader).
 */
async function call(
  path: string,
  json: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const executionContext = createExecutionContext();
  const response = await worker.fetch(
    new Request(`https://edge.test${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(json),
    }),
    fleetEnv,
    executionContext,
  );
  const text = await response.text();
  await waitOnExecutionContext(executionContext);
  return { status: response.status, text };
}

/** Each started trajectory's key (docs/edge.md, "Who writes a trajectory"), by its id. */
const keys = new Map<string, string>();

/** The id of a trajectory the fleet's Worker starts for `policy`. */
async function startTrajectory(policy: string): Promise<string> {
  const created = await call('/v1/trajectories', { env: 'outside-agent', policy });
  expect(created.status).toBe(201);
  const { trajectory, key } = JSON.parse(created.text) as { trajectory: { id: string }; key: string };
  keys.set(trajectory.id, key);
  return trajectory.id;
}

/** The header that writes the trajectory: its key. */
function keyHeader(trajectoryId: string): Record<string, string> {
  return { 'x-edgerl-trajectory': keys.get(trajectoryId) ?? trajectoryId };
}

/** A published trained version, `ready` on each of `ready`. */
async function versionReadyOn(ready: readonly string[]) {
  const store = await openWorkerdTestStore();
  try {
    const policy = await store.createPolicy({
      name: `fleet-${crypto.randomUUID().slice(0, 8)}`,
      baseModel: 'tiny',
    });
    const version = await store.registerPolicyVersion({ policyId: policy.id, adapterUri: '/adapters/1' });
    await store.publishPolicyVersion({ versionId: version.id });
    for (const replica of ready)
      await store.recordPublication({ versionId: version.id, replica, state: 'ready' });
    return { adapterName: version.adapterName, versionId: version.id };
  } finally {
    await store.close();
  }
}

async function read<T>(
  use: (store: Awaited<ReturnType<typeof openWorkerdTestStore>>) => Promise<T>,
): Promise<T> {
  const store = await openWorkerdTestStore();
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

const question = [{ role: 'user', content: 'Find the value of key qq.' }];

describe.runIf(context.databaseUrl)('the Worker over an inference fleet (EDGERL_INFERENCE_REPLICAS)', () => {
  it('runs a queued episode of a version on the one replica that holds it, and records that replica', async () => {
    const held = await versionReadyOn([b]);
    const { groupId, trajectoryId } = await read(async (store) => {
      const task = multiHop.sampleTask('train', 41);
      const stored = await store.upsertTask({
        env: 'multi-hop',
        key: task.id,
        input: task,
        split: task.split,
      });
      const group = await store.createGroup({ taskId: stored.id, size: 1 });
      // A rollout slot, as POST /v1/rollouts makes it: its runner writes it (docs/edge.md, "Who writes a trajectory").
      const trajectory = await store.startTrajectory({
        groupId: group.id,
        policyVersionId: held.versionId,
        metadata: { model: held.adapterName, slot: 0, settings: {} },
        writer: 'runner',
      });
      return { groupId: group.id, trajectoryId: trajectory.id };
    });
    const before = await answered();
    const batch = createMessageBatch('edgerl-episodes', [
      { id: 'message-1', timestamp: new Date(), attempts: 1, body: episodeMessage(groupId, trajectoryId) },
    ]);
    const executionContext = createExecutionContext();
    await worker.queue(batch, fleetEnv, executionContext);
    expect((await getQueueResult(batch, executionContext)).explicitAcks).toEqual(['message-1']);
    const { trajectory, turns } = await read((store) => store.getTrajectory(trajectoryId));
    expect(trajectory).toMatchObject({ status: 'finished', verifierReward: 1 });
    const assistant = turns.filter((turn) => turn.role === 'assistant');
    const after = await answered();
    expect(after[0]).toBe(before[0]);
    expect(after[1] - before[1]).toBe(assistant.length);
    for (const turn of assistant) expect(turn.metadata?.replica).toBe(b);
  });

  it("proxies a version's calls (whole and streamed) to its replica, records it, and refuses a version no replica holds before recording it", async () => {
    const held = await versionReadyOn([a]);
    const whole = await startTrajectory(held.adapterName);
    const streamedTrajectory = await startTrajectory(held.adapterName);
    const before = await answered();
    const reply = await call(
      '/v1/chat/completions',
      { model: 'anything', messages: question },
      keyHeader(whole),
    );
    expect(reply.status).toBe(200);
    // Streamed too; each reply's turn records the replica it came from.
    const streamed = await call(
      '/v1/chat/completions',
      { model: 'anything', stream: true, messages: [{ role: 'user', content: 'Find the value of key zz.' }] },
      keyHeader(streamedTrajectory),
    );
    expect(streamed.status).toBe(200);
    expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const after = await answered();
    expect([after[0] - before[0], after[1] - before[1]]).toEqual([2, 0]);
    for (const id of [whole, streamedTrajectory]) {
      const { turns } = await read((store) => store.getTrajectory(id));
      expect(turns.map((turn) => [turn.role, turn.metadata?.replica ?? null])).toEqual([
        ['user', null],
        ['assistant', a],
      ]);
    }

    const unheld = await versionReadyOn([]);
    const refused = await call('/v1/trajectories', { env: 'outside-agent', policy: unheld.adapterName });
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text)).toMatchObject({
      error: { code: 'unavailable', message: expect.stringMatching(/is ready on no inference replica/) },
    });
    expect(await answered()).toEqual(after);
  });

  it('quarantines each replica that answers 404 for a version it was ready for, then refuses the version', async () => {
    const held = await versionReadyOn([a, b]);
    const lost = { kind: 'status', status: 404, body: { error: { message: 'The model does not exist.' } } };
    for (const replica of [a, b])
      await fetch(`${replica.replace(/\/v1$/, '')}/__control/fail`, {
        method: 'POST',
        body: JSON.stringify({ faults: [lost] }),
      });
    const trajectory = await startTrajectory(held.adapterName);
    const ask = () =>
      call('/v1/chat/completions', { model: 'anything', messages: question }, keyHeader(trajectory));
    // Both replicas lost it: the first 404 fails over to the other, whose 404 is the answer.
    const first = await ask();
    expect(first.status).toBe(404);
    const rows = await read((store) => store.listPublications({ versionId: held.versionId }));
    expect(rows.map((row) => row.state)).toEqual(['quarantined', 'quarantined']);
    const next = await ask();
    expect(next.status).toBe(503);
    // Neither answer was a reply: nothing was recorded.
    expect((await read((store) => store.getTrajectory(trajectory))).turns).toEqual([]);
  });
});
