// Who writes a trajectory (docs/edge.md, "Who writes a trajectory"), checked by the store itself: its
// append and finish statements refuse another writer's trajectory and a client's wrong or missing key
// even when called directly, stamp each stored turn with its writer, and a claim names a turn another
// writer stored, from which the episode loop then refuses to resume.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environments } from '../../edge/environments/environments.ts';
import { ScriptedPolicyClient } from '../../edge/policy/scripted-policy-client.ts';
import { episodeMessage } from '../../edge/rollouts/episode-message.ts';
import { runQueuedEpisode } from '../../edge/rollouts/run-queued-episode.ts';
import { emptyHistoryDigest } from '../../protocol/history-digest.ts';
import { newTrajectoryKey } from '../../protocol/trajectory-key.ts';
import { testRunner } from '../edge/support/test-runner.ts';
import { assistantTurn, makeGroup, userTurn } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

const lease = { runner: 'edge-1', leaseSeconds: 60 };

async function codeOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
    return 'ok';
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
}

async function runnerSlot(): Promise<string> {
  const { trajectories } = await makeGroup(testStore.store, { size: 1, writer: 'runner' });
  return (trajectories[0] as { id: string }).id;
}

async function turnWriters(trajectoryId: string): Promise<unknown[]> {
  const { rows } = await testStore.store.sql.query(
    'select writer from turns where trajectory_id = $1 order by index',
    [trajectoryId],
  );
  return rows.map((row) => row[0]);
}

describe("a rollout runner's trajectory", () => {
  it('takes turns and its end only from a runner: a client append, conversation or finish is refused', async () => {
    const { store } = testStore;
    const id = await runnerSlot();
    await store.claimTrajectory({ trajectoryId: id, ...lease });
    await store.appendTurn(userTurn(id, 0), lease);
    // The client's writes, as the proxy and the finish route would make them, straight to the store.
    expect(await codeOf(store.appendTurns([assistantTurn(id, 1)]))).toBe('trajectory-owned');
    expect(await codeOf(store.appendTurn(userTurn(id, 0)))).toBe('trajectory-owned');
    const head = await store.getTrajectoryHead(id);
    expect(
      await codeOf(
        store.appendConversation({ turns: [assistantTurn(id, 1)], previousDigest: head.historyDigest ?? '' }),
      ),
    ).toBe('trajectory-owned');
    expect(
      await codeOf(store.appendFinalTurns({ turns: [assistantTurn(id, 1)], finish: { status: 'finished' } })),
    ).toBe('trajectory-owned');
    expect(
      await codeOf(store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: 1 })),
    ).toBe('trajectory-owned');
    const stored = await store.getTrajectory(id);
    expect(stored.trajectory).toMatchObject({ status: 'running', turnCount: 1, verifierReward: null });
    // Its runner goes on, and every turn it stored says so.
    await store.appendFinalTurns({ turns: [assistantTurn(id, 1)], finish: { status: 'finished' }, lease });
    expect(await turnWriters(id)).toEqual(['runner', 'runner']);
  });

  it('refuses a turn its runner did not write when a runner claims it, and the episode ends as error', async () => {
    const { store } = testStore;
    const { group, trajectories } = await makeGroup(store, { size: 1, env: 'multi-hop', writer: 'runner' });
    const id = (trajectories[0] as { id: string }).id;
    // A turn written around the store (the statements would refuse it): the claim names it.
    await store.sql.query(
      `insert into turns (trajectory_id, index, schema_version, role, content, writer) values ($1, 0, 1, 'user', 'x', 'client')`,
      [id],
    );
    await store.sql.query('update trajectories set turn_count = 1 where id = $1', [id]);
    const claim = await store.claimTrajectory({ trajectoryId: id, ...lease });
    expect(claim).toMatchObject({ claimed: true, foreignTurn: { index: 0, writer: 'client' } });
    await store.releaseTrajectories({ runner: lease.runner, trajectoryIds: [id] });
    const policy = new ScriptedPolicyClient([]);
    const outcome = await runQueuedEpisode(
      { store, runner: testRunner(store), environments, policy },
      episodeMessage(group.id, id),
    );
    expect(outcome).toMatchObject({ kind: 'ran', status: 'error' });
    const ended = await store.getTrajectory(id);
    expect(ended.trajectory.status).toBe('error');
    expect(ended.trajectory.errorReason).toMatch(
      /^turn 0 was stored by a client, not by this episode's runner/,
    );
    expect(ended.turns).toHaveLength(1);
  });
});

describe("a client's trajectory", () => {
  it('is written only with its key: none or another is refused, its own is taken', async () => {
    const { store } = testStore;
    const id = crypto.randomUUID();
    const { keyDigest } = newTrajectoryKey(id);
    const other = newTrajectoryKey(id).keyDigest;
    await store.startTrajectory({ id, env: 'my-agent', keyDigest });
    const turns = [userTurn(id, 0), assistantTurn(id, 1)];
    expect(await codeOf(store.appendTurns(turns))).toBe('trajectory-key');
    expect(await codeOf(store.appendTurns(turns, { keyDigest: other }))).toBe('trajectory-key');
    expect(await codeOf(store.appendTurns(turns, lease))).toBe('trajectory-owned');
    expect(
      await codeOf(store.appendConversation({ turns, previousDigest: emptyHistoryDigest, keyDigest: other })),
    ).toBe('trajectory-key');
    await store.appendConversation({ turns, previousDigest: emptyHistoryDigest, keyDigest });
    expect(await turnWriters(id)).toEqual(['client', 'client']);
    expect(await codeOf(store.finishTrajectory({ trajectoryId: id, status: 'finished' }))).toBe(
      'trajectory-key',
    );
    expect(
      await codeOf(store.finishTrajectory({ trajectoryId: id, status: 'finished', keyDigest: other })),
    ).toBe('trajectory-key');
    expect(
      await codeOf(store.finishTrajectory({ trajectoryId: id, status: 'finished', runner: 'edge-1' })),
    ).toBe('trajectory-owned');
    await store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: 1, keyDigest });
    expect((await store.getTrajectory(id)).trajectory).toMatchObject({
      status: 'finished',
      verifierReward: 1,
    });
  });

  it('opened before keys (no digest) is still written with its id alone', async () => {
    const { store } = testStore;
    const { id } = await store.startTrajectory({ env: 'my-agent' });
    await store.appendTurns([userTurn(id, 0), assistantTurn(id, 1)]);
    await store.finishTrajectory({ trajectoryId: id, status: 'finished' });
    expect((await store.getTrajectory(id)).trajectory).toMatchObject({ status: 'finished', turnCount: 2 });
  });
});

describe("a runner's claims and sweeps", () => {
  it("lease only rollout slots: a client's trajectory in a group is never claimed, leased or swept", async () => {
    const { store } = testStore;
    // A group an outside agent fills (POST /v1/groups, then POST /v1/trajectories joining it).
    const { trajectories } = await makeGroup(store, { size: 1 });
    const id = (trajectories[0] as { id: string }).id;
    const claim = await store.claimTrajectory({ trajectoryId: id, ...lease });
    expect(claim).toMatchObject({ claimed: false, reason: expect.stringMatching(/writer is client/) });
    expect(await store.claimTrajectories({ trajectoryIds: [id], ...lease })).toEqual([]);
    const { rows } = await store.sql.query(
      'select runner, lease_expires_at from trajectories where id = $1',
      [id],
    );
    expect(rows).toEqual([[null, null]]);
    // Even one that carries a lapsed lease (written around the store) is left to its client by the sweep,
    // which would otherwise end it as a runner and be refused mid-transaction.
    await store.sql.query(
      `update trajectories set runner = 'gone', lease_expires_at = now() - interval '1 second' where id = $1`,
      [id],
    );
    const swept = await store.sweepTrajectories({
      runner: 'sweeper',
      leaseSeconds: 60,
      scope: 'all',
      maxResumes: 0,
      maxAgeSeconds: 3600,
    });
    expect([...swept.taken, ...swept.ended].map((episode) => episode.trajectoryId)).not.toContain(id);
    expect((await store.getTrajectory(id)).trajectory.status).toBe('running');
  });
});

describe('an uploaded trajectory', () => {
  it('is never written again', async () => {
    const { store } = testStore;
    const result = await store.ingestTrajectories({
      episodes: [
        {
          key: `upload-${crypto.randomUUID()}`,
          env: 'my-agent',
          status: 'finished',
          turns: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'hello' },
          ],
        },
      ],
    });
    const id = (result.trajectories[0] as { trajectoryId: string }).trajectoryId;
    expect(await turnWriters(id)).toEqual(['ingest', 'ingest']);
    expect(await codeOf(store.appendTurns([userTurn(id, 2)]))).toBe('trajectory-owned');
    expect(
      await codeOf(store.finishTrajectory({ trajectoryId: id, status: 'error', errorReason: 'x' })),
    ).toBe('trajectory-owned');
  });
});
