// The recording proxy's view of an OpenAI chat completions request: lenient where clients differ
// (content as text parts, `developer` messages, extra fields passed through untouched), strict where
// recording needs it (one choice, messages it can store). Pure.
import { z } from 'zod';
import type { ChatMessage, ToolCall } from '../../protocol/chat.ts';
import {
  requestContentSchema,
  requestContentText,
  toolCallIdSchema,
} from '../../protocol/openai/request-message-parts.ts';

/** Text, or text parts (joined); images and audio cannot be stored as turns (refused naming the part). */
const content = requestContentSchema;

const toolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

const messageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content }),
  z.looseObject({ role: z.literal('developer'), content }),
  z.looseObject({ role: z.literal('user'), content }),
  z.looseObject({
    role: z.literal('assistant'),
    content: content.nullish(),
    tool_calls: z.array(toolCall).nullish(),
  }),
  z.looseObject({ role: z.literal('tool'), content, tool_call_id: toolCallIdSchema }),
]);
type ProxyMessage = z.infer<typeof messageSchema>;

export const proxyRequestSchema = z.looseObject({
  model: z.string().min(1).max(300),
  messages: z.array(messageSchema).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  /** Only one choice can become the trajectory's next turn. */
  n: z
    .number()
    .int()
    .refine((n) => n === 1, 'the recording proxy records one choice; send n: 1 or leave it out')
    .nullish(),
  logprobs: z.boolean().nullish(),
  return_token_ids: z.boolean().nullish(),
  temperature: z.number().nullish(),
  max_tokens: z.number().int().nullish(),
  max_completion_tokens: z.number().int().nullish(),
});
export type ProxyRequest = z.infer<typeof proxyRequestSchema>;

function text(value: z.infer<typeof content> | null | undefined): string | null {
  return value === null || value === undefined ? null : requestContentText(value);
}

/** The message as a turn stores it: `developer` is the system role by another name. */
export function toChatMessage(message: ProxyMessage): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text(message.content) ?? '' };
    case 'user':
      return { role: 'user', content: text(message.content) ?? '' };
    case 'assistant': {
      const calls: ToolCall[] = (message.tool_calls ?? []).map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.function.name, arguments: call.function.arguments },
      }));
      return {
        role: 'assistant',
        content: text(message.content),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      };
    }
    case 'tool':
      return { role: 'tool', content: text(message.content) ?? '', tool_call_id: message.tool_call_id };
  }
}
