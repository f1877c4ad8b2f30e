// Turns OpenAI-shaped chat messages and tool specs into the values chat templates expect. Leaves out
// rendering (chat-tokenizer.ts).
//
// Templates written for Hugging Face (Qwen, Llama 3.1, Hermes) expect a tool call's `arguments` as a
// mapping, not the JSON text OpenAI's wire format carries; vLLM parses them before rendering
// (vllm/entrypoints/chat_utils.py, `_postprocess_messages`), and so do we, once per call
// (tool-call-arguments.ts). Text that is not a JSON object stays the string the model wrote;
// templates that test `arguments is string` (Qwen3, ours) print it verbatim.
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { assertNever } from '../../protocol/statuses.ts';
import { type ToolArguments, toolCallArguments } from './tool-call-arguments.ts';

export interface TemplateToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: ToolArguments };
}

export type TemplateMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: TemplateToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

/**
 * Copies only the fields templates read, so extra properties (sampled ids, metadata) never leak into
 * a render; an assistant's null content becomes '' (templates concatenate it), and an empty
 * `tool_calls` list is dropped so templates take their plain-assistant path.
 */
export function toTemplateMessages(messages: readonly ChatMessage[]): TemplateMessage[] {
  return messages.map((message): TemplateMessage => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content: message.content };
      case 'tool':
        return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id };
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        const content = message.content ?? '';
        if (calls.length === 0) return { role: 'assistant', content };
        return {
          role: 'assistant',
          content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.function.name, arguments: toolCallArguments(call) },
          })),
        };
      }
      default:
        return assertNever(message, 'message role');
    }
  });
}

/**
 * Tool specs as plain JSON: a round trip through JSON drops keys whose value is `undefined`, which
 * `tojson` would otherwise print as `null` (and cost tokens) where Python's templates print nothing.
 */
export function toTemplateTools(tools: readonly ToolSpec[] | undefined): unknown[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return JSON.parse(JSON.stringify(tools)) as unknown[];
}
