// The message that asks for one episode to run: on Workers a Cloudflare Queues message body, in
// Node an entry of the in-process queue. It names the trajectory (created with the group, so a
// re-delivered message finds its own slot's state in the store) rather than carrying the episode.
// A sweep's message also names the runner it leased the episode to, so its consumer (and every
// redelivery of it) runs under that lease.
import { z } from 'zod';

export const EPISODE_MESSAGE_VERSION = 1;

export const episodeMessageSchema = z.object({
  v: z.literal(EPISODE_MESSAGE_VERSION),
  groupId: z.uuid(),
  trajectoryId: z.uuid(),
  /** The lease's runner, when a sweep took the episode over before sending this. */
  runner: z.string().min(1).max(200).optional(),
});
export type EpisodeMessage = z.infer<typeof episodeMessageSchema>;

export function episodeMessage(groupId: string, trajectoryId: string, runner?: string): EpisodeMessage {
  return { v: EPISODE_MESSAGE_VERSION, groupId, trajectoryId, ...(runner ? { runner } : {}) };
}

/** Where episode messages go: Node's bounded in-process queue, or a Cloudflare Queue on Workers. */
export interface EpisodeDispatcher {
  dispatch(messages: readonly EpisodeMessage[]): Promise<void>;
}
