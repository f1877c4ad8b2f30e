// A stored trajectory's turn rows as the messages the trainer works with: each row converted once
// (db's turnToChatMessage), assistant turns carrying the ids and logprobs they were sampled with.
// RULER's judge reads the same messages (its schema keeps only the chat fields). Pure.
import type { TurnRow } from '../../db/schema/turns.ts';
import { turnToChatMessage } from '../../db/turn-to-chat-message.ts';
import type { StoredMessage } from './build-batch.ts';

export function storedMessages(trajectory: {
  readonly turns?: readonly TurnRow[] | undefined;
}): StoredMessage[] {
  return (trajectory.turns ?? []).map((turn) => {
    const message = turnToChatMessage(turn);
    if (message.role !== 'assistant') return message;
    return {
      ...message,
      ...(turn.completionTokenIds ? { completionTokenIds: turn.completionTokenIds } : {}),
      ...(turn.completionLogprobs ? { completionLogprobs: turn.completionLogprobs } : {}),
    };
  });
}
