// The recording proxy's history check without reading the stored turns: the request's first n
// messages (n = the turns stored) must digest (protocol/history-digest.ts) to the digest the store
// keeps with the last turn, read with the trajectory row. Only when they do not (a rewritten history,
// whose first differing message the refusal names) or when the store has no digest (turns stored
// before it) are the turns read and compared one by one (new-messages.ts), so a call on a long
// trajectory reads one turn row, not all of them.
import type { Store } from '../../db/store.ts';
import type { ChatMessage } from '../../protocol/chat.ts';
import { emptyHistoryDigest, historyDigests, historyEntry } from '../../protocol/history-digest.ts';
import { type NewMessages, newMessages, tooFewMessages } from './new-messages.ts';

type TrajectoryHead = Awaited<ReturnType<Store['getTrajectoryHead']>>;

export function messageEntry(message: ChatMessage): string {
  return historyEntry({
    role: message.role,
    content: message.content,
    toolCallId: message.role === 'tool' ? message.tool_call_id : undefined,
  });
}

/** The digest of the request's first `count` messages. */
export function requestDigest(messages: readonly ChatMessage[], count: number): string {
  if (count === 0) return emptyHistoryDigest;
  const digests = historyDigests(messages.slice(0, count).map(messageEntry));
  return digests[count - 1] as string;
}

export async function checkHistory(
  store: Store,
  head: TrajectoryHead,
  messages: readonly ChatMessage[],
): Promise<NewMessages> {
  const stored = head.trajectory.turnCount;
  const short = tooFewMessages(stored, messages.length);
  if (short) return short;
  if (head.historyDigest !== null && requestDigest(messages, stored) === head.historyDigest) {
    return { ok: true, firstIndex: stored, messages: messages.slice(stored) };
  }
  const { turns } = await store.getTrajectory(head.trajectory.id);
  return newMessages(turns, messages);
}
