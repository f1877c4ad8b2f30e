// A queued episode whose policy replies with values the store cannot hold ends `error` at once, with
// the reason stored, instead of staying `running` until its lease lapses (edgerl issue 31, item 3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environments } from '../../edge/environments/environments.ts';
import type { PolicyResponse } from '../../edge/policy/policy-client.ts';
import { ScriptedPolicyClient, textReply } from '../../edge/policy/scripted-policy-client.ts';
import { episodeMessage } from '../../edge/rollouts/episode-message.ts';
import { runQueuedEpisode } from '../../edge/rollouts/run-queued-episode.ts';
import { startRollout } from '../../edge/rollouts/start-rollout.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';
import { testRunner } from './support/test-runner.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

/** Runs one multi-hop episode whose policy answers `reply` at once; the stored trajectory after it. */
async function runOne(reply: PolicyResponse) {
  const started = await startRollout(
    {
      store: testStore.store,
      environments,
      dispatcher: { dispatch: async () => {} },
      defaultModel: 'tiny-base',
      awaitRunnerSeconds: 60,
    },
    { env: 'multi-hop', groupSize: 1, taskSeed: 5 },
  );
  const id = started.trajectoryIds[0] as string;
  const outcome = await runQueuedEpisode(
    {
      store: testStore.store,
      runner: testRunner(testStore.store),
      environments,
      policy: new ScriptedPolicyClient([reply]),
      deps: { sleep: async () => {} },
    },
    episodeMessage(started.groupId, id),
  );
  return { outcome, stored: await testStore.store.getTrajectory(id) };
}

describe('hostile values in a queued episode', () => {
  it('ends `error` at once on a token id ≥ 2^31, naming the id and its position', async () => {
    const { outcome, stored } = await runOne(
      textReply('7', { completionTokenIds: [1, 2, 2 ** 31 + 5], completionLogprobs: [-1, -1, -1] }),
    );
    expect(outcome).toMatchObject({ kind: 'ran', status: 'error' });
    expect(stored.trajectory.status).toBe('error');
    expect(stored.trajectory.errorReason).toContain('completion token 2 is 2147483653');
    // The opening is kept; the bad reply is not stored.
    expect(stored.turns.map((turn) => turn.role)).toEqual(['system', 'user']);
  });

  it('ends `error` (not left running) when the store refuses the last step', async () => {
    // A logprob above 0 passes the loop's checks and is refused by the store (validate-turns.ts):
    // the last step is written with the finish, whose refusal used to leave the episode running.
    const { outcome, stored } = await runOne(
      textReply('7', { completionTokenIds: [1], completionLogprobs: [0.5] }),
    );
    expect(outcome).toMatchObject({ kind: 'ran' });
    expect(stored.trajectory.status).toBe('error');
    expect(stored.trajectory.errorReason).toMatch(/^store refused the last step: /);
  });
});
