// Whether a policy reply may be stored as a turn: its size (content + tool-call arguments, in UTF-8
// bytes) within the episode's bound, and every token id an integer in [0, vocab size) and within the
// int4 column (protocol/validate-turns.ts). Pure; the loop ends the episode `error` with the message.
// A bad id used to reach the store, whose refusal the loop retried and then left the episode running
// until its lease lapsed; checked here, it ends the episode at once and names the id and its position.
import { utf8ByteLength } from '../../protocol/utf8-byte-length.ts';
import { maxTokenId } from '../../protocol/validate-turns.ts';
import type { PolicyResponse } from '../policy/policy-client.ts';

export interface ReplyBounds {
  readonly maxReplyBytes: number;
  readonly vocabSize?: number;
}

/** The reply's stored text in bytes: what the turn row holds besides token data. */
export function replyBytes(response: Pick<PolicyResponse, 'message'>): number {
  const { message } = response;
  let bytes = utf8ByteLength(message.content ?? '');
  for (const call of message.tool_calls ?? []) {
    bytes += utf8ByteLength(call.function.arguments) + utf8ByteLength(call.function.name);
  }
  return bytes;
}

export function replyIssue(response: PolicyResponse, bounds: ReplyBounds): string | undefined {
  const bytes = replyBytes(response);
  if (bytes > bounds.maxReplyBytes) {
    return `reply-too-large: the reply is ${bytes} bytes (content and tool-call arguments), over the bound of ${bounds.maxReplyBytes} (maxReplyBytes); not stored`;
  }
  const limit = bounds.vocabSize !== undefined ? Math.min(bounds.vocabSize - 1, maxTokenId) : maxTokenId;
  const ids = response.completionTokenIds ?? [];
  for (let position = 0; position < ids.length; position++) {
    const id = ids[position] as number;
    if (!Number.isInteger(id) || id < 0 || id > limit) {
      const range =
        bounds.vocabSize !== undefined && bounds.vocabSize - 1 < maxTokenId
          ? `[0, ${bounds.vocabSize}) (the vocabulary size)`
          : `[0, ${maxTokenId + 1}) (the int4 column)`;
      return `invalid-token-id: completion token ${position} is ${id}, outside ${range}`;
    }
  }
  return undefined;
}
