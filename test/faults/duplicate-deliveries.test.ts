// Fault scenario: at-least-once delivery. The same episode message reaches the queue consumer
// (edge/rollouts/consume-episode.ts, which the Worker's `queue` handler and Node's in-process queue
// both run) twice in sequence, several times at once, and again after the episode ended, on a real
// store (PGlite, or the Postgres server) against the inference double. The consumer is idempotent
// because the store decides: an ended trajectory is acknowledged untouched, and of two runs racing the
// loser is refused at its first differing turn and leaves the trajectory to the winner. Checks: each
// trajectory holds its episode once (the perfect agent's turns, no gap, no repeat), one final status,
// the group completes once. (test/workerd/worker.test.ts acknowledges a repeat in workerd too.)
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { environments } from '../../edge/environments/environments.ts';
import { OpenAIPolicyClient } from '../../edge/policy/openai-policy-client.ts';
import { type Consumed, consumeEpisode } from '../../edge/rollouts/consume-episode.ts';
import { type EpisodeMessage, episodeMessage } from '../../edge/rollouts/episode-message.ts';
import type { EpisodeRunnerContext } from '../../edge/rollouts/run-queued-episode.ts';
import { startRollout } from '../../edge/rollouts/start-rollout.ts';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import { testRunner } from '../edge/support/test-runner.ts';
import { countEpisodeFaults } from './support/count-episode-faults.ts';
import type { FaultOutcome } from './support/fault-outcome.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';

let h: EdgeHarness;
let runner: EpisodeRunnerContext;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
  // Each answer takes a moment, as a model's does, so runs of one message overlap for real.
  h.double.delayMs = 25;
  // One runner, as one edge process is: its deliveries of a message race on the store's turn rules.
  runner = {
    store: h.store,
    runner: testRunner(h.store),
    environments,
    policy: new OpenAIPolicyClient({ baseUrl: h.double.baseUrl }),
    deps: { sleep: async () => {} },
  };
});
afterAll(async () => {
  await h?.close();
});

/** A rollout group whose messages are handed back instead of queued: the test delivers them. */
async function groupOf(size: number, taskSeed: number) {
  const messages: EpisodeMessage[] = [];
  const started = await startRollout(
    {
      store: h.store,
      environments,
      dispatcher: { dispatch: async (batch) => void messages.push(...batch) },
      defaultModel: 'tiny-base',
      awaitRunnerSeconds: 60,
    },
    { env: 'multi-hop', groupSize: size, taskSeed },
  );
  const task = (await h.store.getTask(started.taskId)).input as { hops: number };
  // system, user, one lookup and its result per hop, the answer.
  return { ...started, messages, expectedTurns: 2 + 2 * task.hops + 1 };
}

const deliver = (message: EpisodeMessage, attempt = 1): Promise<Consumed> =>
  consumeEpisode(runner, message, { attempt, maxAttempts: 4 });

/**
 * From the store: each trajectory holds exactly its episode (fewer turns: lost; more: duplicated)
 * with the shared checks of countEpisodeFaults, finished with reward 1. Records and asserts all 0.
 */
async function expectEpisodesOnce(
  context: TestContext,
  group: { trajectoryIds: readonly string[]; expectedTurns: number },
): Promise<void> {
  const { outcome, found } = await countEpisodeFaults(h.store, group);
  let { lostTurns, duplicates } = outcome;
  const problems = [...found];
  for (const id of group.trajectoryIds) {
    const { trajectory, turns } = await h.store.getTrajectory(id);
    if (turns.length < group.expectedTurns) lostTurns += group.expectedTurns - turns.length;
    if (turns.length > group.expectedTurns) duplicates += turns.length - group.expectedTurns;
    if (turns.length !== group.expectedTurns) problems.push(`${id}: ${turns.length} turns`);
    expect([trajectory.status, trajectory.verifierReward], id).toEqual(['finished', 1]);
    expect(trajectory.turnCount, id).toBe(turns.length);
  }
  const counted: FaultOutcome = { lostTurns, duplicates, leaks: outcome.leaks };
  recordFaultOutcome(context, counted);
  expect(counted, problems.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
}

describe('episode messages delivered more than once', () => {
  it('in sequence: the repeat is acknowledged and runs nothing', async (context) => {
    const group = await groupOf(1, 51);
    const [message] = group.messages as [EpisodeMessage];
    expect(await deliver(message)).toMatchObject({ ack: true, outcome: { kind: 'ran', status: 'finished' } });
    const calls = h.double.requests.length;
    const ended = await h.store.getGroup({ groupId: group.groupId, includeTurns: true });
    expect(ended.group.status).toBe('complete');

    expect(await deliver(message, 2)).toMatchObject({
      ack: true,
      outcome: { kind: 'skipped', reason: expect.stringMatching(/already ended \(finished\)/) },
    });
    // The last allowed delivery of an ended episode must not close it again (as `error`).
    expect(await deliver(message, 4)).toMatchObject({ ack: true, outcome: { kind: 'skipped' } });
    expect(h.double.requests.length).toBe(calls);
    // The group, its trajectory and every turn exactly as the first run left them.
    expect(await h.store.getGroup({ groupId: group.groupId, includeTurns: true })).toEqual(ended);
    await expectEpisodesOnce(context, group);
  });

  it('at the same time: one run wins, the others stop without touching its trajectory', async (context) => {
    const group = await groupOf(2, 52);
    // Three deliveries of each message, all at once.
    const outcomes = await Promise.all(
      group.messages.flatMap((message) => [deliver(message), deliver(message, 2), deliver(message, 3)]),
    );
    for (const [slot, message] of group.messages.entries()) {
      const mine = outcomes.slice(slot * 3, slot * 3 + 3);
      expect(
        mine.every((consumed) => consumed.ack),
        message.trajectoryId,
      ).toBe(true);
      const kinds = mine.map((consumed) => (consumed.ack ? consumed.outcome.kind : 'retry'));
      // Exactly one run closed the trajectory; the others lost a race or found it ended.
      expect(
        kinds.filter((kind) => kind === 'ran'),
        JSON.stringify(mine),
      ).toHaveLength(1);
      expect(
        kinds.filter((kind) => kind !== 'ran').every((kind) => kind === 'superseded' || kind === 'skipped'),
      ).toBe(true);
    }
    const { group: stored } = await h.store.getGroup({ groupId: group.groupId });
    expect(stored.status).toBe('complete');
    await expectEpisodesOnce(context, group);
  });

  it('through the Node edge’s own queue: a rollout whose messages are dispatched again while it runs', async (context) => {
    const response = await h.api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 3, taskSeed: 53 } });
    expect(response.status).toBe(202);
    const started = (await response.json()) as { groupId: string; trajectoryIds: string[]; taskId: string };
    const again = started.trajectoryIds.map((id) => episodeMessage(started.groupId, id));
    await h.edge.queue.dispatch([...again, ...again]);
    await h.edge.queue.idle();
    const task = (await h.store.getTask(started.taskId)).input as { hops: number };
    const { group } = await h.store.getGroup({ groupId: started.groupId });
    expect(group.status).toBe('complete');
    const completedAt = group.completedAt;
    await expectEpisodesOnce(context, {
      trajectoryIds: started.trajectoryIds,
      expectedTurns: 2 + 2 * task.hops + 1,
    });

    // Delivered once more after the group completed: nothing runs, and it does not complete twice.
    const calls = h.double.requests.length;
    await h.edge.queue.dispatch(again);
    await h.edge.queue.idle();
    expect(h.double.requests.length).toBe(calls);
    expect((await h.store.getGroup({ groupId: started.groupId })).group.completedAt).toEqual(completedAt);
  });

  it('after the episode ended in error: the repeat leaves the error as it was', async (context) => {
    const group = await groupOf(1, 54);
    const [message] = group.messages as [EpisodeMessage];
    // The endpoint refuses the model (404, not retried): the episode ends `error` with two turns.
    h.double.fail({ kind: 'status', status: 404, body: { error: { message: 'no such model' } } });
    expect(await deliver(message)).toMatchObject({ ack: true, outcome: { kind: 'ran', status: 'error' } });
    const ended = await h.store.getTrajectory(message.trajectoryId);
    expect(ended.trajectory.errorReason).toMatch(/^policy: HTTP 404/);
    const calls = h.double.requests.length;
    for (const attempt of [1, 4])
      expect(await deliver(message, attempt)).toMatchObject({ ack: true, outcome: { kind: 'skipped' } });
    expect(h.double.requests.length).toBe(calls);
    expect(await h.store.getTrajectory(message.trajectoryId)).toEqual(ended);
    const { outcome, found } = await countEpisodeFaults(h.store, { trajectoryIds: [message.trajectoryId] });
    recordFaultOutcome(context, outcome);
    expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
    expect(ended.turns.map((turn) => turn.role)).toEqual(['system', 'user']);
  });
});
