// How long a runner holds a rollout episode, how often stale ones are swept, and when a stale
// episode is ended instead of resumed: the settings the edge config (edge-config.ts) reads, with
// their defaults written once here. Leaves out the lease itself (the store's trajectory-leases.ts).

export interface EpisodeLeaseSettings {
  /** A runner's hold on an episode without a stored turn or a beat, in seconds. */
  readonly leaseSeconds: number;
  /** Node: seconds between sweeps for stale episodes (Workers: the cron trigger in wrangler.toml). */
  readonly sweepSeconds: number;
  /** Takeovers after which a stale episode is ended (`error`) rather than resumed again. */
  readonly maxResumes: number;
  /** A stale episode started longer ago than this many seconds is ended rather than resumed. */
  readonly maxAgeSeconds: number;
}

export const episodeLeaseDefaults: EpisodeLeaseSettings = {
  // A killed edge's episodes wait at most this long for another; long enough to ride out a store
  // blip of a few beats (an edgerl choice).
  leaseSeconds: 60,
  // Cloudflare's cron triggers fire at most once a minute; Node keeps the same pace.
  sweepSeconds: 60,
  // Cloudflare Queues' default max_retries (3): an episode that keeps killing its runner is given up.
  maxResumes: 3,
  // A day: an older episode's policy version has most likely moved on (an edgerl choice).
  maxAgeSeconds: 86_400,
};

/**
 * Milliseconds between beats: a third of the lease, as etcd's client renews its leases
 * (clientv3 lease keepalive, TTL/3), so two beats can be missed before the lease lapses.
 */
export function beatEveryMs(settings: Pick<EpisodeLeaseSettings, 'leaseSeconds'>): number {
  return (settings.leaseSeconds * 1000) / 3;
}
