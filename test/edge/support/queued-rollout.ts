// Starting a rollout whose episode messages are kept for the test to deliver (no queue runs them).
import type { Store } from '../../../db/store.ts';
import { environments } from '../../../edge/environments/environments.ts';
import type { EpisodeMessage } from '../../../edge/rollouts/episode-message.ts';
import { type RolloutRequest, startRollout } from '../../../edge/rollouts/start-rollout.ts';

export async function queuedRollout(store: Store, request: RolloutRequest): Promise<EpisodeMessage[]> {
  const messages: EpisodeMessage[] = [];
  await startRollout(
    {
      store,
      environments,
      dispatcher: { dispatch: async (batch) => void messages.push(...batch) },
      defaultModel: 'tiny-base',
      awaitRunnerSeconds: 60,
    },
    request,
  );
  return messages;
}
