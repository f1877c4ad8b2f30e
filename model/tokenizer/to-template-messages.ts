// Turns OpenAI-shaped chat messages and tool specs into the values chat templates expect. Leaves out
// rendering (chat-tokenizer.ts).
//
// Templates written for Hugging Face (Qwen, Llama 3.1, Hermes) expect a tool call's `arguments` as a
// mapping, not the JSON text OpenAI's wire format carries; vLLM parses them before rendering
// (vllm/entrypoints/chat_utils.py, `_postprocess_messages`), and so do we. Unlike vLLM, text that is
// not a JSON object is kept as the string the model wrote (vLLM substitutes `{}`), so a training
// render shows the policy its own malformed call; templates that test `arguments is string` (Qwen3,
// ours) print it verbatim.
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { assertNever } from '../../protocol/statuses.ts';

export type TemplateArguments = Record<string, unknown> | string;

export interface TemplateToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: TemplateArguments };
}

export type TemplateMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: TemplateToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

/** A tool call's arguments as a template sees them: the parsed object, `{}` when empty, else the raw text. */
export function templateArguments(text: string): TemplateArguments {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Not JSON: the model's own text is what it produced, so it is what the template shows.
  }
  return text;
}

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
            function: { name: call.function.name, arguments: templateArguments(call.function.arguments) },
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
