// One delivery of an episode message against a store that fails: the message is handed back for
// redelivery until the last allowed delivery, which closes the trajectory as `error` so its group
// can complete; an episode cut short by a turn the store could not take stays running, and the next
// delivery resumes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, TrajectoryLease } from '../../db/store.ts';
import { environments } from '../../edge/environments/environments.ts';
import { ScriptedPolicyClient } from '../../edge/policy/scripted-policy-client.ts';
import { consumeEpisode } from '../../edge/rollouts/consume-episode.ts';
import { OpenAIPolicyClient } from '../../edge/policy/openai-policy-client.ts';
import { EpisodeInterrupted } from '../../edge/rollouts/run-queued-episode.ts';
import { type EpisodeMessage, episodeMessage } from '../../edge/rollouts/episode-message.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import { startInferenceDouble } from './support/inference-double.ts';
import { queuedRollout } from './support/queued-rollout.ts';
import { makeGroup } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';
import { testRunner } from './support/test-runner.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

/** The real store, except that claiming an episode (its first read) fails as if the database were unreachable. */
function failingReads(store: Store): Store {
  return {
    ...store,
    claimTrajectory: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
  } as unknown as Store;
}

describe('consumeEpisode', () => {
  it('asks for redelivery while deliveries remain, then gives up and closes the trajectory', async () => {
    const { group, trajectories } = await makeGroup(testStore.store, {
      size: 1,
      env: 'multi-hop',
      writer: 'runner',
    });
    const trajectory = trajectories[0] as (typeof trajectories)[number];
    const context = {
      store: failingReads(testStore.store),
      runner: testRunner(testStore.store),
      environments,
      policy: new ScriptedPolicyClient([]),
    };
    const message = episodeMessage(group.id, trajectory.id);
    const early = await consumeEpisode(context, message, { attempt: 3, maxAttempts: 4 });
    expect(early).toMatchObject({
      ack: false,
      error: expect.objectContaining({ message: expect.stringMatching(/ECONNREFUSED/) }),
    });
    expect((await testStore.store.getTrajectory(trajectory.id)).trajectory.status).toBe('running');
    const last = await consumeEpisode(context, message, { attempt: 4, maxAttempts: 4 });
    expect(last).toEqual({
      ack: true,
      outcome: {
        kind: 'abandoned',
        reason: 'gave up after 4 deliveries: connect ECONNREFUSED 127.0.0.1:5432',
      },
    });
    const closed = await testStore.store.getTrajectory(trajectory.id);
    expect(closed.trajectory).toMatchObject({
      status: 'error',
      errorReason: 'gave up after 4 deliveries: connect ECONNREFUSED 127.0.0.1:5432',
    });
    expect((await testStore.store.getGroup({ groupId: group.id })).group.status).toBe('complete');
  });

  it('leaves an episode running when the store refused a turn on every retry; the next delivery resumes it', async () => {
    const double = await startInferenceDouble();
    try {
      const store = testStore.store;
      const [message] = (await queuedRollout(store, { env: 'multi-hop', groupSize: 1, taskSeed: 71 })) as [
        EpisodeMessage,
      ];
      // The first reply (turn 2) is refused as if the database were away, for all four of the loop's
      // attempts; then the store is back (the trajectory's finish would succeed).
      let refusals = 4;
      const flaky = {
        ...store,
        appendTurns: (turns: readonly TurnInput[], lease?: TrajectoryLease) =>
          turns.some((turn) => turn.index === 2) && refusals-- > 0
            ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'))
            : store.appendTurns(turns, lease),
      } as unknown as Store;
      const context = {
        store: flaky,
        runner: testRunner(store),
        environments,
        policy: new OpenAIPolicyClient({ baseUrl: double.baseUrl }),
        deps: { sleep: async () => {} },
      };
      const first = await consumeEpisode(context, message, { attempt: 1, maxAttempts: 4 });
      expect(first).toMatchObject({ ack: false, error: expect.any(EpisodeInterrupted) });
      const interrupted = await store.getTrajectory(message.trajectoryId);
      expect(interrupted.trajectory.status).toBe('running');
      expect(interrupted.turns.map((turn) => turn.role)).toEqual(['system', 'user']);

      const second = await consumeEpisode(context, message, { attempt: 2, maxAttempts: 4 });
      expect(second).toMatchObject({
        ack: true,
        outcome: { kind: 'ran', status: 'finished', resumed: true },
      });
      const resumed = await store.getTrajectory(message.trajectoryId);
      expect(resumed.trajectory).toMatchObject({ status: 'finished', verifierReward: 1, errorReason: null });
      expect(resumed.turns.map((turn) => turn.index)).toEqual(resumed.turns.map((_, index) => index));
      expect((await store.getGroup({ groupId: message.groupId })).group.status).toBe('complete');
    } finally {
      await double.close();
    }
  });

  it('acknowledges malformed messages and unknown trajectories without running anything', async () => {
    const context = {
      store: testStore.store,
      runner: testRunner(testStore.store),
      environments,
      policy: new ScriptedPolicyClient([]),
    };
    expect(await consumeEpisode(context, { v: 2 }, { attempt: 1, maxAttempts: 4 })).toMatchObject({
      ack: true,
      outcome: { kind: 'skipped', reason: expect.stringMatching(/^invalid message: /) },
    });
    const ghost = episodeMessage(
      '00000000-0000-4000-8000-000000000001',
      '00000000-0000-4000-8000-000000000002',
    );
    expect(await consumeEpisode(context, ghost, { attempt: 1, maxAttempts: 4 })).toMatchObject({
      ack: true,
      outcome: { kind: 'skipped', reason: expect.stringMatching(/does not exist/) },
    });
  });

  it('closes a trajectory that cannot run (no routing metadata) as a setup error', async () => {
    const { group, trajectories } = await makeGroup(testStore.store, {
      size: 1,
      env: 'multi-hop',
      writer: 'runner',
    });
    const trajectory = trajectories[0] as (typeof trajectories)[number];
    const context = {
      store: testStore.store,
      runner: testRunner(testStore.store),
      environments,
      policy: new ScriptedPolicyClient([]),
    };
    const consumed = await consumeEpisode(context, episodeMessage(group.id, trajectory.id), {
      attempt: 1,
      maxAttempts: 4,
    });
    expect(consumed).toMatchObject({ ack: true, outcome: { kind: 'failed-setup' } });
    const closed = await testStore.store.getTrajectory(trajectory.id);
    expect(closed.trajectory.status).toBe('error');
    expect(closed.trajectory.errorReason).toMatch(/^setup: trajectory metadata: /);
  });

  it('checks the stored task against its environment when it reads it, and closes one that does not fit', async () => {
    // makeGroup stores the input { q: 1 }: no id, split or prompt, so not a multi-hop task.
    const { group } = await makeGroup(testStore.store, { size: 1, started: 0, env: 'multi-hop' });
    const trajectory = await testStore.store.startTrajectory({
      groupId: group.id,
      writer: 'runner',
      metadata: { model: 'm', slot: 0, settings: {} },
    });
    const policy = new ScriptedPolicyClient([]);
    const consumed = await consumeEpisode(
      { store: testStore.store, runner: testRunner(testStore.store), environments, policy },
      episodeMessage(group.id, trajectory.id),
      { attempt: 1, maxAttempts: 4 },
    );
    expect(consumed).toMatchObject({ ack: true, outcome: { kind: 'failed-setup' } });
    const closed = await testStore.store.getTrajectory(trajectory.id);
    expect(closed.trajectory.errorReason).toMatch(/^setup: task .+ does not fit multi-hop: /);
    expect(closed.turns).toEqual([]);
    policy.assertDone();
  });
});
