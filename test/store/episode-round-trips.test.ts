// Round trips per rollout episode, pinned on the driver (test/support/counting-store.ts): what the
// queue consumer sends to run one episode of a group, from the claim to the finish, by statement
// kind. A fresh episode is its claim (which brings the trajectory and its task back), one append per
// step (the opening messages; each assistant turn with its tool results) but the last, and the last
// step written with the finish; a resumed one reads its stored turns too. Against the inference
// double (a perfect multi-hop agent).
import { describe, expect, it } from 'vitest';
import { environments } from '../../edge/environments/environments.ts';
import { OpenAIPolicyClient } from '../../edge/policy/openai-policy-client.ts';
import { consumeEpisode } from '../../edge/rollouts/consume-episode.ts';
import type { EpisodeEvent } from '../../edge/episode/episode-events.ts';
import type { EpisodeMessage } from '../../edge/rollouts/episode-message.ts';
import { queuedRollout } from '../edge/support/queued-rollout.ts';
import { testRunner } from '../edge/support/test-runner.ts';
import { useCountingSetup } from '../support/counting-setup.ts';

const setup = useCountingSetup();

const claim = 'with claimed as ( update trajectories';
const append = 'with recursive advanced as ( update trajectories';
const finalStep = 'with recursive final_step as ( update trajectories';

/** The messages of a started multi-hop group of `size`, queued nowhere (the test delivers them). */
const queuedGroup = (size: number) =>
  queuedRollout(setup.store, { env: 'multi-hop', groupSize: size, taskSeed: 17 });

function context() {
  return {
    store: setup.store,
    runner: testRunner(setup.store),
    environments,
    policy: new OpenAIPolicyClient({ baseUrl: setup.inference.baseUrl }),
    deps: { sleep: async () => {} },
  };
}

/** Steps the stored episode was written in: the opening, then one per assistant turn. */
async function stepsOf(trajectoryId: string): Promise<{ turns: number; steps: number }> {
  const { turns } = await setup.store.getTrajectory(trajectoryId);
  return { turns: turns.length, steps: 1 + turns.filter((turn) => turn.role === 'assistant').length };
}

describe('a rollout episode', () => {
  it('costs its claim and one write per step, the last with the finish, nothing else', async () => {
    const [message] = (await queuedGroup(2)) as [EpisodeMessage];
    setup.counting.reset();
    const consumed = await consumeEpisode(context(), message, { attempt: 1, maxAttempts: 4 });
    const sent = new Map(setup.counting.statements());
    const trips = setup.counting.roundTrips();
    expect(consumed).toMatchObject({ ack: true, outcome: { kind: 'ran', status: 'finished' } });
    const { turns, steps } = await stepsOf(message.trajectoryId);
    // multi-hop: the opening (system, user) and at least two tool-calling steps before the answer.
    expect(steps).toBeGreaterThanOrEqual(3);
    expect(sent).toEqual(
      new Map([
        [claim, 1],
        [append, steps - 1],
        [finalStep, 1],
      ]),
    );
    // Fewer round trips than turns: a step of an assistant turn and its tool results is one.
    expect(trips).toBe(steps + 1);
    const { trajectory } = await setup.store.getTrajectory(message.trajectoryId);
    expect(trajectory).toMatchObject({ status: 'finished', verifierReward: 1, turnCount: turns });
    expect(trajectory.leaseExpiresAt).toBeNull();
    expect(trips).toBeLessThan(turns);
  });

  it('reads its stored turns once more when it resumes', async () => {
    const [message] = (await queuedGroup(1)) as [EpisodeMessage];
    // A first run stopped after its first assistant step (the edge was stopping): it stays running.
    const stopping = new AbortController();
    const stopAfterStep = (event: EpisodeEvent) => {
      if (event.type === 'turn-end' && event.turn.role === 'assistant') stopping.abort();
    };
    const first = await consumeEpisode(
      { ...context(), signal: stopping.signal, onEvent: stopAfterStep },
      message,
      { attempt: 1, maxAttempts: 4 },
    );
    expect(first).toMatchObject({ ack: true, outcome: { kind: 'skipped' } });
    const before = (await setup.store.getTrajectory(message.trajectoryId)).turns.length;
    expect(before).toBeGreaterThan(0);
    setup.counting.reset();
    const second = await consumeEpisode(context(), message, { attempt: 1, maxAttempts: 4 });
    const sent = new Map(setup.counting.statements());
    const trips = setup.counting.roundTrips();
    expect(second).toMatchObject({ ack: true, outcome: { kind: 'ran', status: 'finished', resumed: true } });
    const { steps } = await stepsOf(message.trajectoryId);
    // The opening and the first step were stored; getTrajectory reads the row and its turns.
    expect(sent).toEqual(
      new Map([
        [claim, 1],
        ['select "id", "group_id", "env", "task_id", "policy_version_id", "experiment_arm_', 1],
        ['select "trajectory_id", "index", "schema_version", "role", "content", "tool_call', 1],
        [append, steps - 3],
        [finalStep, 1],
      ]),
    );
    expect(trips).toBe(steps + 1);
  });
});
