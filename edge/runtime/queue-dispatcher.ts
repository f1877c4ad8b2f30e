// The Workers EpisodeDispatcher: one Cloudflare Queues message per episode, sent in batches of at
// most 100 (the documented `sendBatch` limit). The queue's consumer (worker.ts, beside this file) runs them, with
// retries and a dead-letter queue configured in wrangler.toml.
import type { QueueLike } from './worker-types.ts';
import type { EpisodeDispatcher, EpisodeMessage } from '../rollouts/episode-message.ts';

/** Cloudflare Queues accept at most 100 messages per sendBatch call. */
const maxBatch = 100;

export function queueDispatcher(queue: QueueLike<EpisodeMessage>): EpisodeDispatcher {
  return {
    async dispatch(messages) {
      for (let start = 0; start < messages.length; start += maxBatch) {
        await queue.sendBatch(messages.slice(start, start + maxBatch).map((body) => ({ body })));
      }
    },
  };
}
