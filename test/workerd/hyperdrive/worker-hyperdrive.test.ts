// The edge Worker in workerd with its store on a HYPERDRIVE binding: node-postgres over
// `cloudflare:sockets` to Miniflare's local Hyperdrive, which forwards to the test database that
// wrangler got as the binding's local connection string (vitest.config.ts, workers-hyperdrive). There
// is no DATABASE_URL in this project, so every stored turn went through Hyperdrive. Needs
// EDGERL_TEST_DATABASE_URL (CI's server run); without it only the binding's presence is checked.
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  SELF,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { openHyperdriveStore } from '../../../db/drivers/open-hyperdrive-store.ts';
import { multiHop, solve } from '../../../edge/environments/multi-hop.ts';
import { episodeMessage } from '../../../edge/rollouts/episode-message.ts';
import worker, { type WorkerEnv } from '../../../edge/runtime/worker.ts';

const context = inject('workerd');
const workerEnv = env as unknown as WorkerEnv;
const key = 'workerd-test-key';

function api(path: string, json?: unknown): Promise<Response> {
  const headers = new Headers({ authorization: `Bearer ${key}` });
  if (json !== undefined) headers.set('content-type', 'application/json');
  return SELF.fetch(`https://edge.test${path}`, {
    headers,
    ...(json !== undefined ? { method: 'POST', body: JSON.stringify(json) } : {}),
  });
}

/** The store the Worker uses, opened the same way (one per use, closed after). */
async function withStore<T>(work: (store: Awaited<ReturnType<typeof openHyperdriveStore>>) => Promise<T>) {
  if (!workerEnv.HYPERDRIVE) throw new Error('no HYPERDRIVE binding in this project');
  const store = await openHyperdriveStore({ hyperdrive: workerEnv.HYPERDRIVE });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Sessions on the test database other than the asking one: the Worker's connections still open. */
const otherSessions = () =>
  withStore(async (store) => {
    const result = await store.sql.query(
      'select count(*)::int from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return Number(result.rows[0]?.[0]);
  });

describe('the HYPERDRIVE binding from wrangler config', () => {
  it('is the only store binding, given by the runtime rather than the origin URL', () => {
    expect(workerEnv.DATABASE_URL).toBeUndefined();
    const connectionString = workerEnv.HYPERDRIVE?.connectionString ?? '';
    // workerd hands out its own host that Miniflare's proxy answers, never the origin's address.
    expect(connectionString).toMatch(/^postgres(ql)?:\/\//);
    expect(new URL(connectionString).hostname).toMatch(/\.hyperdrive\.local$/);
  });
});

describe.runIf(context.databaseUrl)('the Worker on Postgres through Hyperdrive', () => {
  it('reaches the test database itself', async () => {
    const name = await withStore(async (store) => {
      const result = await store.sql.query('select current_database()');
      return String(result.rows[0]?.[0]);
    });
    expect(name).toBe(new URL(context.databaseUrl).pathname.slice(1));
  });

  it('runs a rollout group through the queue consumer to completion, every turn stored', async () => {
    const started = await api('/v1/rollouts', { env: 'multi-hop', groupSize: 4, taskSeed: 5 });
    expect(started.status).toBe(202);
    const { groupId } = (await started.json()) as { groupId: string };
    await expect
      .poll(
        async () =>
          ((await (await api(`/v1/groups/${groupId}`)).json()) as { group: { status: string } }).group.status,
        { timeout: 30_000, interval: 250 },
      )
      .toBe('complete');
    // Read back outside the app, straight from the store: four finished episodes, each the ideal one.
    const group = await withStore((store) => store.getGroup({ groupId, includeTurns: true }));
    expect(group.trajectories.map((trajectory) => [trajectory.status, trajectory.verifierReward])).toEqual(
      Array.from({ length: 4 }, () => ['finished', 1]),
    );
    for (const trajectory of group.trajectories) {
      const roles = trajectory.turns?.map((turn) => turn.role);
      expect(roles?.slice(0, 3)).toEqual(['system', 'user', 'assistant']);
      expect(trajectory.turns?.map((turn) => turn.index)).toEqual(roles?.map((_, index) => index));
      // The double's token ids are the UTF-8 bytes of its answer.
      const answer = trajectory.turns?.at(-1);
      expect(answer?.completionTokenIds).toEqual([...new TextEncoder().encode(answer?.content ?? '')]);
    }
  });

  it("records an outside agent's call through the proxy, one store per request", async () => {
    const created = await api('/v1/trajectories', { env: 'outside-agent' });
    expect(created.status).toBe(201);
    const { trajectory, key: trajectoryKey } = (await created.json()) as {
      trajectory: { id: string };
      key: string;
    };
    const reply = await SELF.fetch('https://edge.test/v1/chat/completions', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-edgerl-trajectory': trajectoryKey,
      },
      body: JSON.stringify({
        model: 'anything',
        messages: [{ role: 'user', content: 'Find the value of key hd.' }],
      }),
    });
    expect(reply.status).toBe(200);
    await reply.text();
    const { turns } = await withStore((store) => store.getTrajectory(trajectory.id));
    expect(turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    expect(turns[0]?.content).toBe('Find the value of key hd.');
  });

  it('closes its connections when each request is done', async () => {
    for (let request = 0; request < 5; request += 1) {
      const executionContext = createExecutionContext();
      const response = await worker.fetch(
        new Request('https://edge.test/v1/groups', { headers: { authorization: `Bearer ${key}` } }),
        workerEnv,
        executionContext,
      );
      expect(response.status).toBe(200);
      await waitOnExecutionContext(executionContext);
    }
    // Each request's pool ends in its waitUntil; the server sees the sessions go as their sockets
    // close. pg's own idle timeout (10 s) is longer than this poll, so only that close passes it.
    await expect.poll(otherSessions, { timeout: 5_000, interval: 100 }).toBe(0);
  });

  it('asks for redelivery when Hyperdrive cannot reach the database, and keeps the stored turns', async () => {
    const task = multiHop.sampleTask('train', 61);
    const { groupId, trajectoryId } = await withStore(async (store) => {
      const stored = await store.upsertTask({
        env: 'multi-hop',
        key: task.id,
        input: task,
        split: task.split,
      });
      const group = await store.createGroup({ taskId: stored.id, size: 1 });
      const started = await store.startTrajectory({
        groupId: group.id,
        metadata: { model: 'tiny-base', slot: 0, settings: {} },
      });
      for (const [index, message] of solve(task).slice(0, 2).entries()) {
        await store.appendTurn({
          trajectoryId: started.id,
          index,
          role: message.role,
          content: message.content,
        });
      }
      return { groupId: group.id, trajectoryId: started.id };
    });
    // A binding whose origin refuses connections, as when the database behind Hyperdrive is down.
    const down = {
      ...workerEnv,
      HYPERDRIVE: { connectionString: 'postgres://nobody:none@127.0.0.1:9/none' },
    };
    const batch = createMessageBatch('edgerl-episodes', [
      { id: 'message-1', timestamp: new Date(), attempts: 1, body: episodeMessage(groupId, trajectoryId) },
    ]);
    const executionContext = createExecutionContext();
    await worker.queue(batch, down, executionContext);
    const result = await getQueueResult(batch, executionContext);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([expect.objectContaining({ msgId: 'message-1' })]);
    const { turns } = await withStore((store) => store.getTrajectory(trajectoryId));
    expect(turns.map((turn) => turn.role)).toEqual(['system', 'user']);
  });
});
