// An episode runner for tests that call the queue consumer directly: a name of its own and a real
// LeaseKeeper on the test's store, with the default lease (episode-leases.ts).
import type { Store } from '../../../db/store.ts';
import { beatEveryMs, episodeLeaseDefaults } from '../../../edge/rollouts/episode-leases.ts';
import { LeaseKeeper } from '../../../edge/rollouts/lease-keeper.ts';
import type { EpisodeRunner } from '../../../edge/rollouts/run-queued-episode.ts';

export function testRunner(
  store: Store,
  name = `test-runner-${crypto.randomUUID().slice(0, 8)}`,
): EpisodeRunner {
  const keeper = new LeaseKeeper({
    store,
    leaseSeconds: episodeLeaseDefaults.leaseSeconds,
    beatEveryMs: beatEveryMs(episodeLeaseDefaults),
  });
  return { name, keeper };
}
