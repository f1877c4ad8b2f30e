// The tools a rollout's episodes are offered are stored with each trajectory: the environment's list
// when the rollout starts, replaced by the running code's list when that changed before the episode
// ran (a deploy while it was queued).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../edge/environments/environment.ts';
import { environments } from '../../edge/environments/environments.ts';
import { ScriptedPolicyClient, textReply } from '../../edge/policy/scripted-policy-client.ts';
import { runQueuedEpisode } from '../../edge/rollouts/run-queued-episode.ts';
import { testRunner } from './support/test-runner.ts';
import { startRollout } from '../../edge/rollouts/start-rollout.ts';
import { episodeMessage } from '../../edge/rollouts/episode-message.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

const multiHop = environments['multi-hop'] as Environment;
const specsOf = (environment: Environment) => environment.tools.map((tool) => tool.spec);

/** multi-hop as a later deploy might define it: its one tool renamed and redescribed. */
const redeployed: Environment = {
  ...multiHop,
  tools: multiHop.tools.map((tool) => ({
    ...tool,
    spec: { ...tool.spec, function: { ...tool.spec.function, name: 'find', description: 'Find a key.' } },
  })),
};

async function start(groupSize: number) {
  return startRollout(
    {
      store: testStore.store,
      environments,
      dispatcher: { dispatch: async () => {} },
      defaultModel: 'tiny-base',
      awaitRunnerSeconds: 60,
    },
    { env: 'multi-hop', groupSize, taskSeed: 3 },
  );
}

describe('tool specs stored with rollout trajectories', () => {
  it("stores the environment's tools on every trajectory when the rollout starts", async () => {
    const started = await start(2);
    for (const id of started.trajectoryIds) {
      const { trajectory } = await testStore.store.getTrajectory(id);
      expect(trajectory.tools).toEqual(specsOf(multiHop));
    }
  });

  it('stores the running code’s tools when they changed before the episode ran', async () => {
    const started = await start(1);
    const id = started.trajectoryIds[0] as string;
    const policy = new ScriptedPolicyClient([textReply('42')]);
    const outcome = await runQueuedEpisode(
      {
        store: testStore.store,
        runner: testRunner(testStore.store),
        environments: { 'multi-hop': redeployed },
        policy,
      },
      episodeMessage(started.groupId, id),
    );
    expect(outcome).toMatchObject({ kind: 'ran' });
    // What the policy was offered is what is stored.
    expect(policy.requests[0]?.tools).toEqual(specsOf(redeployed));
    expect((await testStore.store.getTrajectory(id)).trajectory.tools).toEqual(specsOf(redeployed));
  });
});
