// The edge Worker inside workerd (the vitest Cloudflare pool): the Hono app served by the Worker's
// fetch handler, episodes fanned out through a real (local) Cloudflare Queue to the Worker's queue
// consumer, and the store on the Neon serverless driver against a real Postgres through a
// WebSocket-to-TCP tunnel. Database tests need EDGERL_TEST_DATABASE_URL (CI's server run).
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
  SELF,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { multiHop, solve } from '../../edge/environments/multi-hop.ts';
import { episodeMessage } from '../../edge/rollouts/episode-message.ts';
import { queueMaxDeliveries } from '../../edge/rollouts/queue-delivery.ts';
import worker, { type WorkerEnv } from '../../edge/runtime/worker.ts';
import { openWorkerdTestStore } from './neon-test-store.ts';

const context = inject('workerd');
const key = 'workerd-test-key';

function api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
  if (json !== undefined) headers.set('content-type', 'application/json');
  return SELF.fetch(`https://edge.test${path}`, {
    ...rest,
    headers,
    ...(json !== undefined ? { method: rest.method ?? 'POST', body: JSON.stringify(json) } : {}),
  });
}

describe('the Worker without a database', () => {
  it('serves /health and refuses requests without a valid key', async () => {
    expect(await (await SELF.fetch('https://edge.test/health')).json()).toEqual({
      ok: true,
      service: 'edgerl-edge',
    });
    const anonymous = await SELF.fetch('https://edge.test/v1/groups');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await api('/v1/groups', { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
  });

  it('answers invalid input with a 400 naming the field', async () => {
    const response = await api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: -1 } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { field: string } }).error.field).toBe('groupSize');
    const unknown = await api('/v1/rollouts', { json: { env: 'nope', groupSize: 1 } });
    expect(((await unknown.json()) as { error: { field: string } }).error.field).toBe('env');
  });

  it('says which secret is missing instead of failing obscurely', async () => {
    const broken = { ...(env as unknown as WorkerEnv), EDGERL_EDGE_API_KEYS: '' };
    const response = await worker.fetch(
      new Request('https://edge.test/v1/groups'),
      broken,
      createExecutionContext(),
    );
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /EDGERL_EDGE_API_KEYS/,
    );
  });

  it('exports only handlers from the main module (workerd treats every named export as an entrypoint)', async () => {
    const module = await import('../../edge/runtime/worker.ts');
    expect(Object.keys(module)).toEqual(['default']);
    expect(Object.keys(module.default).sort()).toEqual(['fetch', 'queue', 'scheduled']);
  });
});

describe.runIf(context.databaseUrl)('the Worker on Postgres through the Neon driver', () => {
  it('runs a rollout group through the queue consumer to completion', async () => {
    const started = await api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 2, taskSeed: 3 } });
    expect(started.status).toBe(202);
    const { groupId } = (await started.json()) as { groupId: string };
    await expect
      .poll(
        async () => {
          const body = (await (await api(`/v1/groups/${groupId}`)).json()) as { group: { status: string } };
          return body.group.status;
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBe('complete');
    const { trajectories } = (await (await api(`/v1/groups/${groupId}?turns=true`)).json()) as {
      trajectories: {
        status: string;
        verifierReward: number;
        turns: { role: string; content: string | null; completionTokenIds: number[] | null }[];
      }[];
    };
    expect(trajectories.map((trajectory) => [trajectory.status, trajectory.verifierReward])).toEqual([
      ['finished', 1],
      ['finished', 1],
    ]);
    const roles = trajectories[0]?.turns.map((turn) => turn.role);
    expect(roles?.slice(0, 3)).toEqual(['system', 'user', 'assistant']);
    expect(roles?.at(-1)).toBe('assistant');
    // The double answers by repeating the value result; its token ids are the UTF-8 bytes.
    const answer = trajectories[0]?.turns.at(-1);
    expect(answer?.content).toMatch(/^value "[0-9]"$/);
    expect(answer?.completionTokenIds).toEqual([...new TextEncoder().encode(answer?.content ?? '')]);
  });
});

describe.runIf(context.databaseUrl)('the queue consumer in workerd', () => {
  const stats = async () =>
    (await (await fetch(`${context.inferenceBaseUrl.replace(/\/v1$/, '')}/__control/stats`)).json()) as {
      requests: number;
    };

  async function deliver(body: unknown, attempts = 1, workerEnv = env as unknown as WorkerEnv) {
    const batch = createMessageBatch('edgerl-episodes', [
      { id: 'message-1', timestamp: new Date(), attempts, body },
    ]);
    const executionContext = createExecutionContext();
    await worker.queue(batch, workerEnv, executionContext);
    return getQueueResult(batch, executionContext);
  }

  /** A group of one whose message was never sent, with `turns` of its ideal episode already stored. */
  async function interruptedEpisode(turns: number) {
    const store = await openWorkerdTestStore();
    try {
      const task = multiHop.sampleTask('train', 31);
      const stored = await store.upsertTask({
        env: 'multi-hop',
        key: task.id,
        input: task,
        split: task.split,
      });
      const group = await store.createGroup({ taskId: stored.id, size: 1 });
      // A rollout slot, as POST /v1/rollouts makes it: written only by a runner holding its lease
      // (docs/edge.md, "Who writes a trajectory").
      const trajectory = await store.startTrajectory({
        groupId: group.id,
        metadata: { model: 'tiny-base', slot: 0, settings: {} },
        writer: 'runner',
      });
      // The first run's runner wrote `turns` turns, then stopped and handed its lease back, so the
      // delivery's consumer takes the episode over at once.
      const lease = { runner: 'queue:first-run', leaseSeconds: 60 };
      expect(await store.claimTrajectory({ trajectoryId: trajectory.id, ...lease })).toMatchObject({
        claimed: true,
      });
      for (const [index, message] of solve(task).slice(0, turns).entries()) {
        await store.appendTurn(
          {
            trajectoryId: trajectory.id,
            index,
            role: message.role,
            content: message.content,
            ...(message.role === 'assistant' && message.tool_calls ? { toolCalls: message.tool_calls } : {}),
            ...(message.role === 'assistant' ? { metadata: { finishReason: 'tool_calls' } } : {}),
            ...(message.role === 'tool' ? { toolCallId: message.tool_call_id } : {}),
          },
          lease,
        );
      }
      await store.releaseTrajectories({ runner: lease.runner, trajectoryIds: [trajectory.id] });
      return { task, groupId: group.id, trajectoryId: trajectory.id };
    } finally {
      await store.close();
    }
  }

  it('resumes a re-delivered episode after its stored turns, then acknowledges repeats without running', async () => {
    const { task, groupId, trajectoryId } = await interruptedEpisode(3);
    const before = (await stats()).requests;
    const first = await deliver(episodeMessage(groupId, trajectoryId));
    expect(first.explicitAcks).toEqual(['message-1']);
    // The pending lookup ran as a tool; the policy was asked for the remaining hops and the answer.
    expect((await stats()).requests - before).toBe(task.hops);
    const read = (await (await api(`/v1/trajectories/${trajectoryId}`)).json()) as {
      trajectory: { status: string; verifierReward: number };
      turns: { role: string; content: string | null }[];
    };
    expect(read.trajectory).toMatchObject({ status: 'finished', verifierReward: 1 });
    expect(read.turns.map((turn) => [turn.role, turn.content])).toEqual(
      solve(task).map((message) => [message.role, message.content]),
    );
    const again = await deliver(episodeMessage(groupId, trajectoryId), 2);
    expect(again.explicitAcks).toEqual(['message-1']);
    expect((await stats()).requests - before).toBe(task.hops);
  });

  it('asks for redelivery while the store is unreachable, and closes the trajectory on the last delivery', async () => {
    const { groupId, trajectoryId } = await interruptedEpisode(2);
    const unreachable = {
      ...(env as unknown as WorkerEnv),
      DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
    };
    const failed = await deliver(episodeMessage(groupId, trajectoryId), 1, unreachable);
    expect(failed.explicitAcks).toEqual([]);
    // (The pool's queue result does not report the delay; retryDelaySeconds has its own test.)
    expect(failed.retryMessages).toEqual([expect.objectContaining({ msgId: 'message-1' })]);
    // Last delivery with a working store: runs normally.
    const last = await deliver(episodeMessage(groupId, trajectoryId), queueMaxDeliveries);
    expect(last.explicitAcks).toEqual(['message-1']);
    const read = (await (await api(`/v1/trajectories/${trajectoryId}`)).json()) as {
      trajectory: { status: string };
    };
    expect(read.trajectory.status).toBe('finished');
  });

  it('retries a failing policy call inside the episode', async () => {
    const { groupId, trajectoryId } = await interruptedEpisode(2);
    await fetch(`${context.inferenceBaseUrl.replace(/\/v1$/, '')}/__control/fail`, {
      method: 'POST',
      body: JSON.stringify({ faults: [{ kind: 'status', status: 503 }] }),
    });
    await deliver(episodeMessage(groupId, trajectoryId));
    const read = (await (await api(`/v1/trajectories/${trajectoryId}`)).json()) as {
      trajectory: { status: string };
      turns: { role: string; metadata: { attempts?: number } | null }[];
    };
    expect(read.trajectory.status).toBe('finished');
    expect(read.turns[2]?.metadata?.attempts).toBe(2);
  });
});

describe.runIf(context.databaseUrl)('the cron sweep in workerd', () => {
  /** A group of one whose consumer died after `turns` turns: leased to it, the lease lapsed. */
  async function orphanedEpisode(turns: number, resumes: number) {
    const store = await openWorkerdTestStore();
    try {
      const task = multiHop.sampleTask('train', 41 + resumes);
      const stored = await store.upsertTask({
        env: 'multi-hop',
        key: task.id,
        input: task,
        split: task.split,
      });
      const group = await store.createGroup({ taskId: stored.id, size: 1 });
      // A rollout slot, as POST /v1/rollouts makes it (docs/edge.md, "Who writes a trajectory").
      const trajectory = await store.startTrajectory({
        groupId: group.id,
        metadata: { model: 'tiny-base', slot: 0, settings: {} },
        writer: 'runner',
      });
      const lease = { runner: 'queue:dead-consumer', leaseSeconds: 60 };
      await store.claimTrajectory({ trajectoryId: trajectory.id, ...lease });
      for (const [index, message] of solve(task).slice(0, turns).entries()) {
        await store.appendTurn(
          { trajectoryId: trajectory.id, index, role: message.role, content: message.content },
          lease,
        );
      }
      await store.sql.query(
        `update trajectories set lease_expires_at = now() - interval '1 second', resumes = $2 where id = $1`,
        [trajectory.id, resumes],
      );
      return { task, groupId: group.id, trajectoryId: trajectory.id };
    } finally {
      await store.close();
    }
  }

  async function runCron(): Promise<void> {
    const executionContext = createExecutionContext();
    await worker.scheduled(
      createScheduledController({ scheduledTime: Date.now(), cron: '* * * * *' }),
      env as unknown as WorkerEnv,
      executionContext,
    );
    await waitOnExecutionContext(executionContext);
  }

  type TrajectoryRead = {
    trajectory: { status: string; runner: string; resumes: number; errorReason: string | null };
    turns: { role: string; content: string | null }[];
  };
  const read = async (id: string) => (await (await api(`/v1/trajectories/${id}`)).json()) as TrajectoryRead;

  it('sends an episode whose consumer died to the queue again; its consumer resumes it to the end', async () => {
    const { task, groupId, trajectoryId } = await orphanedEpisode(2, 0);
    await runCron();
    await expect
      .poll(async () => (await read(trajectoryId)).trajectory.status, { timeout: 30_000 })
      .toBe('finished');
    const done = await read(trajectoryId);
    // Taken over once, under the sweep's name, which its queue message carried to the consumer.
    expect(done.trajectory.runner).toMatch(/^cron:/);
    expect(done.trajectory.resumes).toBe(1);
    expect(done.turns.slice(0, 2).map((turn) => turn.content)).toEqual(
      solve(task)
        .slice(0, 2)
        .map((message) => message.content),
    );
    const group = (await (await api(`/v1/groups/${groupId}`)).json()) as { group: { status: string } };
    expect(group.group.status).toBe('complete');
  });

  it('ends an episode taken over too often with a reason, and its group completes', async () => {
    const { groupId, trajectoryId } = await orphanedEpisode(2, 3);
    await runCron();
    const ended = await read(trajectoryId);
    expect(ended.trajectory.status).toBe('error');
    expect(ended.trajectory.errorReason).toMatch(/^abandoned: its runner stopped 4 time\(s\)/);
    const group = (await (await api(`/v1/groups/${groupId}`)).json()) as { group: { status: string } };
    expect(group.group.status).toBe('complete');
  });
});

describe.runIf(context.databaseUrl)('the recording proxy in workerd', () => {
  it("records an outside agent's calls and streams them back as events", async () => {
    const created = await api('/v1/trajectories', { json: { env: 'outside-agent' } });
    expect(created.status).toBe(201);
    const { trajectory, key: trajectoryKey } = (await created.json()) as {
      trajectory: { id: string };
      key: string;
    };
    const messages = [
      { role: 'system', content: 'Follow keys.' },
      { role: 'user', content: 'Find the value of key qq.' },
    ];
    const reply = await api('/v1/chat/completions', {
      json: { model: 'anything', messages },
      headers: { 'x-edgerl-trajectory': trajectoryKey },
    });
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as {
      choices: { message: { tool_calls: unknown[] }; token_ids?: unknown }[];
    };
    expect(body.choices[0]?.message.tool_calls).toHaveLength(1);
    expect(body.choices[0]?.token_ids).toBeUndefined();
    const finish = await api(`/v1/trajectories/${trajectory.id}/finish`, {
      json: { status: 'truncated', reason: 'demo' },
      headers: { 'x-edgerl-trajectory': trajectoryKey },
    });
    expect(finish.status).toBe(200);
    const events = await (await api(`/v1/trajectories/${trajectory.id}/events`)).text();
    expect([...events.matchAll(/^event: (\w+)$/gm)].map((match) => match[1])).toEqual([
      'turn',
      'turn',
      'turn',
      'end',
    ]);
    expect(events).toMatch(/"completionTokenIds":\[/);
  });

  it('passes a streamed reply through and records it', async () => {
    const created = await api('/v1/trajectories', { json: { env: 'outside-agent' } });
    const { trajectory, key: trajectoryKey } = (await created.json()) as {
      trajectory: { id: string };
      key: string;
    };
    const reply = await api('/v1/chat/completions', {
      json: {
        model: 'anything',
        stream: true,
        messages: [{ role: 'user', content: 'Find the value of key zz.' }],
      },
      headers: { 'x-edgerl-trajectory': trajectoryKey },
    });
    expect(reply.status).toBe(200);
    const text = await reply.text();
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const read = (await (await api(`/v1/trajectories/${trajectory.id}`)).json()) as {
      turns: {
        role: string;
        toolCalls: { function: { arguments: string } }[] | null;
        completionTokenIds: number[] | null;
      }[];
    };
    expect(read.turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    expect(read.turns[1]?.toolCalls?.[0]?.function.arguments).toBe('{"key":"zz"}');
    expect(read.turns[1]?.completionTokenIds).toEqual([
      ...new TextEncoder().encode('<tool_call>{"key":"zz"}</tool_call>'),
    ]);
  });
});
