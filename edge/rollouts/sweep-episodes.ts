// One sweep for episodes whose runner stopped, shared by the Node edge (at start and on a timer) and
// the Worker's cron trigger: the store takes the stale ones over for `runner` and ends those that
// will not resume (taken over too often, too old) with a reason; the taken ones are handed to
// `dispatch` (Node's queue, or the EPISODES queue on Workers), each message naming the runner whose
// lease it carries. If they cannot be dispatched, their leases are handed back for the next sweep.
import type { Store, SweepResult, SweepScope } from '../../db/store.ts';
import { episodeMessage, type EpisodeMessage } from './episode-message.ts';
import type { EpisodeLeaseSettings } from './episode-leases.ts';

export interface SweepEpisodesOptions {
  readonly store: Store;
  readonly runner: string;
  readonly scope: SweepScope;
  readonly settings: EpisodeLeaseSettings;
  dispatch(messages: readonly EpisodeMessage[]): Promise<void>;
}

export async function sweepEpisodes(options: SweepEpisodesOptions): Promise<SweepResult> {
  const { store, runner, settings } = options;
  const swept = await store.sweepTrajectories({
    runner,
    scope: options.scope,
    leaseSeconds: settings.leaseSeconds,
    maxResumes: settings.maxResumes,
    maxAgeSeconds: settings.maxAgeSeconds,
  });
  if (swept.taken.length === 0) return swept;
  try {
    await options.dispatch(
      swept.taken.map((episode) => episodeMessage(episode.groupId, episode.trajectoryId, runner)),
    );
  } catch (error) {
    await store
      .releaseTrajectories({ runner, trajectoryIds: swept.taken.map((episode) => episode.trajectoryId) })
      .catch(() => {});
    throw error;
  }
  return swept;
}
