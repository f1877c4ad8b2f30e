// One delivery of an episode message, for both consumers (the Worker's queue handler and Node's
// in-process queue): run it, and say whether to acknowledge it or have it delivered again. On the
// last allowed delivery a failure ends the trajectory as `error`, so its group can still complete
// instead of waiting forever on a message gone to the dead-letter queue.
import { errorMessage } from '../../protocol/error-message.ts';
import {
  type EpisodeRunnerContext,
  abandonEpisode,
  type QueuedEpisodeOutcome,
  runQueuedEpisode,
} from './run-queued-episode.ts';

export interface Delivery {
  /** 1 for the first delivery. */
  readonly attempt: number;
  readonly maxAttempts: number;
}

export type Consumed =
  | { readonly ack: true; readonly outcome: QueuedEpisodeOutcome | { kind: 'abandoned'; reason: string } }
  | { readonly ack: false; readonly error: unknown };

export async function consumeEpisode(
  context: EpisodeRunnerContext,
  body: unknown,
  delivery: Delivery,
): Promise<Consumed> {
  try {
    return { ack: true, outcome: await runQueuedEpisode(context, body) };
  } catch (error) {
    if (delivery.attempt < delivery.maxAttempts) return { ack: false, error };
    const reason = `gave up after ${delivery.attempt} deliveries: ${errorMessage(error)}`;
    const trajectoryId = trajectoryIdOf(body);
    if (trajectoryId) {
      try {
        await abandonEpisode(context.store, trajectoryId, reason);
      } catch {
        // The store is still failing; the trajectory stays `running` for an operator to see.
      }
    }
    return { ack: true, outcome: { kind: 'abandoned', reason } };
  }
}

function trajectoryIdOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || !('trajectoryId' in body)) return undefined;
  return typeof body.trajectoryId === 'string' ? body.trajectoryId : undefined;
}
