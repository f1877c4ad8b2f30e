// The Node entry end to end on the embedded store (or a server database): rollouts through the HTTP
// API, episodes against the inference double (a perfect multi-hop agent with scripted faults),
// policy retries, errors, truncation, tool-error observations and idempotent re-delivery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEnvironment } from '../../edge/environments/environment.ts';
import { environments } from '../../edge/environments/environments.ts';
import { type MultiHopTask, multiHop, solve } from '../../edge/environments/multi-hop.ts';
import { defineTool } from '../../edge/environments/tool.ts';
import { episodeMessage } from '../../edge/rollouts/episode-message.ts';
import { z } from 'zod';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';

/** multi-hop with one assistant turn allowed: the perfect agent's first lookup already hits the limit. */
const oneTurn = defineEnvironment<MultiHopTask>({
  ...multiHop,
  name: 'one-turn',
  tools: multiHop.tools,
  maxTurns: 1,
});
/** multi-hop whose only tool is not called `lookup`: every call the agent makes is an unknown tool. */
const renamed = defineEnvironment<MultiHopTask>({
  ...multiHop,
  name: 'renamed-tool',
  tools: [
    defineTool({
      name: 'find',
      description: 'Find.',
      parameters: z.object({ key: z.string() }),
      run: () => 'x',
    }),
  ],
});

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({
    environments: { ...environments, [oneTurn.name]: oneTurn, [renamed.name]: renamed },
  });
});
afterAll(async () => {
  await h?.close();
});

async function rollout(body: Record<string, unknown>) {
  const response = await h.api('/v1/rollouts', { json: body });
  const json = (await response.json()) as Record<string, unknown> & {
    groupId: string;
    trajectoryIds: string[];
  };
  if (response.status !== 202) throw new Error(`rollout: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function group(id: string, turns = false) {
  const response = await h.api(`/v1/groups/${id}${turns ? '?turns=true' : ''}`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    group: { status: string; size: number; taskId: string };
    progress: Record<string, number>;
    trajectories: {
      id: string;
      status: string;
      verifierReward: number | null;
      errorReason: string | null;
      turnCount: number;
      metadata: Record<string, unknown>;
      turns?: {
        index: number;
        role: string;
        content: string | null;
        toolError: string | null;
        completionTokenIds: number[] | null;
        metadata: Record<string, unknown> | null;
      }[];
    }[];
  };
}

async function storedTask(taskId: string): Promise<MultiHopTask> {
  return multiHop.taskSchema.parse((await h.store.getTask(taskId)).input);
}

describe('POST /v1/rollouts on the Node edge', () => {
  it('runs a group of full episodes and completes it', async () => {
    const started = await rollout({ env: 'multi-hop', groupSize: 3, taskSeed: 11 });
    expect(started.trajectoryIds).toHaveLength(3);
    expect(started.model).toBe('tiny-base');
    await h.edge.queue.idle();
    const { group: stored, progress, trajectories } = await group(started.groupId, true);
    expect(stored.status).toBe('complete');
    expect(progress).toMatchObject({ size: 3, ended: 3, finished: 3, running: 0 });
    const task = await storedTask(stored.taskId);
    const ideal = solve(task);
    for (const trajectory of trajectories) {
      expect(trajectory.status).toBe('finished');
      expect(trajectory.verifierReward).toBe(1);
      expect(trajectory.turns?.map((turn) => turn.role)).toEqual(ideal.map((message) => message.role));
      expect(trajectory.turns?.map((turn) => turn.content)).toEqual(ideal.map((message) => message.content));
      // Token-exact: the double's ids are the UTF-8 bytes of what it sampled.
      const answer = trajectory.turns?.at(-1);
      expect(answer?.completionTokenIds).toEqual([...new TextEncoder().encode(`value "${task.answer}"`)]);
    }
  });
});

describe('the SQL environment on the Node edge', () => {
  it('runs with the store as its read-only sql capability', async () => {
    const started = await rollout({ env: 'sql-agent', groupSize: 1, taskSeed: 2 });
    await h.edge.queue.idle();
    const [trajectory] = (await group(started.groupId, true)).trajectories;
    // The double is no SQL agent: it gives up at once, and the verifier scores that 0. What matters
    // is that the episode ran and was scored (a missing capability would fail it at setup).
    expect(trajectory?.status).toBe('finished');
    expect(trajectory?.verifierReward).toBe(0);
    expect(trajectory?.turns?.at(-1)).toMatchObject({ role: 'assistant', content: 'I do not know.' });
  });
});

describe('episode failures on the Node edge', () => {
  it('retries a failing policy call and records how many attempts the turn took', async () => {
    // The first call of the episode fails twice (503, then a dropped connection), then succeeds.
    h.double.fail({ kind: 'status', status: 503 }, { kind: 'drop' });
    const started = await rollout({ env: 'multi-hop', groupSize: 1, taskSeed: 12 });
    await h.edge.queue.idle();
    const [trajectory] = (await group(started.groupId, true)).trajectories;
    expect(trajectory?.status).toBe('finished');
    expect(trajectory?.verifierReward).toBe(1);
    const firstAssistant = trajectory?.turns?.find((turn) => turn.role === 'assistant');
    expect(firstAssistant?.metadata?.attempts).toBe(3);
  });

  it('ends the episode as error after the last retry, keeping the turns written before', async () => {
    // Four attempts in all (the loop's default), all failing.
    h.double.fail(...Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 500 })));
    const started = await rollout({ env: 'multi-hop', groupSize: 1, taskSeed: 13 });
    await h.edge.queue.idle();
    const { group: stored, trajectories } = await group(started.groupId, true);
    const [trajectory] = trajectories;
    expect(trajectory?.status).toBe('error');
    expect(trajectory?.errorReason).toMatch(/^policy: HTTP 500 .*\(after 4 attempts\)$/);
    expect(trajectory?.turns?.map((turn) => turn.role)).toEqual(['system', 'user']);
    // An episode that failed still ends its slot, so the group completes.
    expect(stored.status).toBe('complete');
  });

  it('does not retry a 400 from the policy endpoint', async () => {
    const before = h.double.requests.length;
    h.double.fail({ kind: 'status', status: 400, body: { error: { message: 'bad model' } } });
    const started = await rollout({ env: 'multi-hop', groupSize: 1, taskSeed: 14 });
    await h.edge.queue.idle();
    const [trajectory] = (await group(started.groupId)).trajectories;
    expect(trajectory?.errorReason).toMatch(/HTTP 400.*bad model.*\(after 1 attempt\)/);
    expect(h.double.requests.length - before).toBe(1);
  });

  it('truncates at the environment turn limit', async () => {
    const started = await rollout({ env: 'one-turn', groupSize: 2, taskSeed: 15 });
    await h.edge.queue.idle();
    const { trajectories } = await group(started.groupId, true);
    for (const trajectory of trajectories) {
      expect(trajectory.status).toBe('truncated');
      expect(trajectory.errorReason).toMatch(/^truncated: turn-limit/);
      // system, user, the one assistant call and its tool result; no further policy call.
      expect(trajectory.turns?.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(trajectory.verifierReward).toBe(0);
    }
  });

  it('turns an unknown tool into an error observation and goes on', async () => {
    const started = await rollout({ env: 'renamed-tool', groupSize: 1, taskSeed: 16 });
    await h.edge.queue.idle();
    const [trajectory] = (await group(started.groupId, true)).trajectories;
    const tool = trajectory?.turns?.find((turn) => turn.role === 'tool');
    expect(tool?.toolError).toBe('unknown-tool');
    expect(JSON.parse(tool?.content ?? '{}')).toEqual({ error: 'unknown tool "lookup"; available: find' });
    // The double reads the error and answers 0: the episode finished, wrong or right by chance.
    expect(trajectory?.status).toBe('finished');
    expect(trajectory?.turns?.at(-1)).toMatchObject({ role: 'assistant', content: '0' });
  });
});

describe('re-delivery of queued episodes', () => {
  it('acknowledges a message for a finished trajectory without running it again', async () => {
    const started = await rollout({ env: 'multi-hop', groupSize: 2, taskSeed: 21 });
    await h.edge.queue.idle();
    const before = await group(started.groupId, true);
    const calls = h.double.requests.length;
    await h.edge.queue.dispatch(started.trajectoryIds.map((id) => episodeMessage(started.groupId, id)));
    await h.edge.queue.idle();
    expect(h.double.requests.length).toBe(calls);
    expect(await group(started.groupId, true)).toEqual(before);
  });

  it('resumes an episode interrupted after a tool call, without rewriting stored turns', async () => {
    // A group whose messages are never sent: we play the first run by hand and stop it mid-turn.
    const task = multiHop.sampleTask('train', 22);
    const stored = await h.store.upsertTask({
      env: 'multi-hop',
      key: task.id,
      input: task,
      split: task.split,
    });
    const created = await h.store.createGroup({ taskId: stored.id, size: 1 });
    // A rollout slot, as POST /v1/rollouts makes it: written only by a runner holding its lease
    // (docs/edge.md, "Who writes a trajectory").
    const trajectory = await h.store.startTrajectory({
      groupId: created.id,
      metadata: { model: 'tiny-base', slot: 0, settings: {} },
      writer: 'runner',
    });
    const ideal = solve(task);
    // The first run's runner claims the episode and writes system, user, and the first lookup call;
    // its tool result was never written.
    const firstRun = { runner: 'first-run', leaseSeconds: 60 };
    expect(await h.store.claimTrajectory({ trajectoryId: trajectory.id, ...firstRun })).toMatchObject({
      claimed: true,
    });
    for (const [index, message] of ideal.slice(0, 3).entries()) {
      await h.store.appendTurn(
        {
          trajectoryId: trajectory.id,
          index,
          role: message.role,
          content: message.content,
          ...(message.role === 'assistant' && message.tool_calls ? { toolCalls: message.tool_calls } : {}),
          ...(message.role === 'assistant' ? { metadata: { finishReason: 'tool_calls' } } : {}),
        },
        firstRun,
      );
    }
    // It stops there and hands its lease back, so the re-delivery's runner takes the episode over at once.
    expect(
      await h.store.releaseTrajectories({ runner: firstRun.runner, trajectoryIds: [trajectory.id] }),
    ).toEqual([trajectory.id]);
    const calls = h.double.requests.length;
    await h.edge.queue.dispatch([episodeMessage(created.id, trajectory.id)]);
    await h.edge.queue.idle();
    const { trajectory: after, turns } = await h.store.getTrajectory(trajectory.id);
    expect(after.status).toBe('finished');
    expect(after.verifierReward).toBe(1);
    expect(turns.map((turn) => [turn.role, turn.content])).toEqual(
      ideal.map((message) => [message.role, message.content]),
    );
    // The pending call was answered by the tool (no policy call), then the policy took the rest:
    // hops − 1 more lookups and the answer.
    expect(h.double.requests.length - calls).toBe(task.hops);
    const firstAsk = h.double.requests[calls]?.body.messages as { role: string }[];
    expect(firstAsk.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
  });

  it('lets exactly one of two concurrent deliveries of one message own the trajectory', async () => {
    const started = await rollout({ env: 'multi-hop', groupSize: 1, taskSeed: 23 });
    const [id] = started.trajectoryIds as [string];
    // The original delivery is queued; a duplicate arrives at the same time.
    await h.edge.queue.dispatch([episodeMessage(started.groupId, id)]);
    await h.edge.queue.idle();
    const { trajectory, turns } = await h.store.getTrajectory(id);
    const task = await storedTask((await h.store.getGroup({ groupId: started.groupId })).group.taskId);
    expect(trajectory.status).toBe('finished');
    expect(trajectory.verifierReward).toBe(1);
    expect(turns.map((turn) => turn.index)).toEqual(solve(task).map((_, index) => index));
    // The loser either lost a race for a turn index or found the trajectory already ended.
    const outcomes = h.logs.filter((line) => line.startsWith(`episode ${id}:`));
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatch(/: (superseded|skipped): /);
  });
});
