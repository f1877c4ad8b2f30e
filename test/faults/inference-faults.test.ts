// Fault scenario: rollouts on the real Node edge (a real store: PGlite, or the Postgres server) against
// an inference endpoint that answers 5xx, garbage (not JSON, JSON of the wrong shape, a truncated body)
// and hangs past the policy timeout. The loop's retry rule (protocol/openai/retryable-status.ts, the
// policy client's `isRetryablePolicyError`): 5xx and timeouts are retried, up to 4 attempts; a
// malformed answer is not (it would come back the same). So faults that recover end in a finished
// episode with each turn stored once, and garbage ends the episode `error` with a reason naming the
// endpoint's fault and the turns before it intact. Every group completes; nothing is left running.
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { type EdgeHarness, startEdgeHarness } from '../edge/support/edge-harness.ts';
import type { Fault } from '../edge/support/inference-double.ts';
import { countEpisodeFaults } from './support/count-episode-faults.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';

/** Short enough that a hang is a timeout, long enough for a healthy call on a busy machine. */
const policyTimeoutMs = 1_500;
/** Well past the timeout: the client has given up before this answer comes. */
const hangMs = 4_000;

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base', policyTimeoutMs });
});
afterAll(async () => {
  await h?.close();
});

interface Rollout {
  readonly groupId: string;
  readonly trajectoryIds: string[];
}

/** Starts a rollout with `faults` queued for the endpoint's next calls, and waits until it has run. */
async function rolloutWith(faults: readonly Fault[], groupSize: number, taskSeed: number) {
  const delivered = h.double.completions;
  const calls = h.double.requests.length;
  h.double.fail(...faults);
  const response = await h.api('/v1/rollouts', { json: { env: 'multi-hop', groupSize, taskSeed } });
  expect(response.status).toBe(202);
  const started = (await response.json()) as Rollout;
  await h.edge.queue.idle();
  const { group, trajectories } = await h.store.getGroup({ groupId: started.groupId, includeTurns: true });
  const task = (await h.store.getTask(group.taskId)).input as { hops: number };
  return {
    group,
    trajectories,
    // The perfect agent: one lookup per hop, then the answer.
    assistantTurns: task.hops + 1,
    calls: h.double.requests.length - calls,
    replies: h.double.completions - delivered,
    trajectoryIds: started.trajectoryIds,
  };
}

/** Counts from the store and records it: each delivered reply stored once, nothing left running. */
async function expectNothingLost(
  context: TestContext,
  run: { trajectoryIds: readonly string[]; replies: number },
): Promise<void> {
  const { outcome, found } = await countEpisodeFaults(h.store, run);
  recordFaultOutcome(context, outcome);
  expect(outcome, found.join('; ')).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
}

const status = (code: number): Fault => ({
  kind: 'status',
  status: code,
  body: { error: { message: `scripted ${code}` } },
});

describe('episodes against a failing inference endpoint', () => {
  it('rides out 5xx answers: every episode finishes, each turn stored once', async (context) => {
    // Three failures shared by two episodes: at most three for one call, within its four attempts.
    const run = await rolloutWith([status(503), status(500), status(502)], 2, 21);
    expect(run.group.status).toBe('complete');
    for (const trajectory of run.trajectories) {
      expect(trajectory.status).toBe('finished');
      expect(trajectory.verifierReward).toBe(1);
      const roles = trajectory.turns?.map((turn) => turn.role) ?? [];
      expect(roles.filter((role) => role === 'assistant')).toHaveLength(run.assistantTurns);
    }
    // Every call either failed (3) or became a stored turn.
    expect(run.calls).toBe(3 + 2 * run.assistantTurns);
    expect(run.replies).toBe(2 * run.assistantTurns);
    const attempts = run.trajectories
      .flatMap((trajectory) => trajectory.turns ?? [])
      .reduce((sum, turn) => sum + (turn.metadata?.attempts ?? 0), 0);
    expect(attempts).toBe(run.calls);
    await expectNothingLost(context, run);
  });

  it('rides out a call that hangs past the timeout, and ends with a reason when every call hangs', async (context) => {
    const recovered = await rolloutWith([{ kind: 'delay', ms: hangMs }], 1, 22);
    const [finished] = recovered.trajectories;
    expect(finished?.status).toBe('finished');
    expect(recovered.calls).toBe(1 + recovered.assistantTurns);
    // The answer that came too late was never received, so it is not a turn.
    expect(recovered.replies).toBe(recovered.assistantTurns);
    expect(finished?.turns?.find((turn) => turn.role === 'assistant')?.metadata?.attempts).toBe(2);
    await expectNothingLost(context, recovered);

    // One good turn, then four hangs: the episode ends `error` after its last attempt.
    const hang: Fault = { kind: 'delay', ms: hangMs };
    const stuck = await rolloutWith([{ kind: 'answer' }, hang, hang, hang, hang], 1, 23);
    const [ended] = stuck.trajectories;
    expect(ended?.status).toBe('error');
    expect(ended?.errorReason).toMatch(
      /^policy: no answer from http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions in time \(after 4 attempts\)$/,
    );
    expect(ended?.turns?.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(stuck.group.status).toBe('complete');
    await expectNothingLost(context, stuck);
  });

  const garbage: readonly { what: string; body: string; reason: RegExp }[] = [
    { what: 'a body that is not JSON', body: 'upstream exploded <html>', reason: /is not JSON/ },
    {
      what: 'a truncated body',
      body: '{"id":"x","choices":[{"index":0,"message":{"role":"assis',
      reason: /is not JSON/,
    },
    {
      what: 'JSON of the wrong shape',
      body: '{"choices":[{"index":0,"text":"no message"}]}',
      reason: /message/,
    },
    { what: 'a completion with no choices', body: '{"id":"x","choices":[]}', reason: /choices/ },
  ];
  for (const [offset, { what, body, reason }] of garbage.entries()) {
    it(`ends the episode as error, turns kept, on ${what} mid-episode`, async (context) => {
      // The first call answers; the second returns garbage with status 200.
      const run = await rolloutWith([{ kind: 'answer' }, { kind: 'text', body }], 1, 30 + offset);
      const [trajectory] = run.trajectories;
      expect(trajectory?.status).toBe('error');
      expect(trajectory?.errorReason).toMatch(/^policy: /);
      expect(trajectory?.errorReason).toMatch(reason);
      // Not retried: a malformed answer would come back the same.
      expect(trajectory?.errorReason).toMatch(/\(after 1 attempt\)$/);
      expect(run.calls).toBe(2);
      // The turns written before the fault are all there, unchanged in order.
      expect(trajectory?.turns?.map((turn) => [turn.index, turn.role])).toEqual([
        [0, 'system'],
        [1, 'user'],
        [2, 'assistant'],
        [3, 'tool'],
      ]);
      expect(run.group.status).toBe('complete');
      await expectNothingLost(context, run);
    });
  }

  it('keeps the edge serving after all that: a clean rollout finishes', async (context) => {
    const run = await rolloutWith([], 2, 40);
    expect(run.trajectories.map((trajectory) => trajectory.status)).toEqual(['finished', 'finished']);
    await expectNothingLost(context, run);
  });
});
