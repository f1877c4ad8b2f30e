// A tool call's arguments as a value, from the JSON text that OpenAI's wire format carries, parsed
// once per call object: every chat-template render that shows the call reads the same value (the
// training render shows each call in the conversation and again in the last turn's prompt, and a
// training cycle renders the same messages more than once). parse-tool-calls parses model output on
// its own (it must, to find the call). Leaves out checking the arguments against the tool's schema.
import type { ToolCall } from '../../protocol/chat.ts';

/** What a template sees: the parsed object, or the text as written when it is not a JSON object. */
export type ToolArguments = Record<string, unknown> | string;

/** Per call, the text a value was parsed from: a call whose text changed is parsed again. */
const parsedByCall = new WeakMap<ToolCall, { readonly text: string; readonly value: ToolArguments }>();

/**
 * The arguments text as a template expects it: the parsed object, `{}` when blank, else the raw text.
 * Unlike vLLM (`_postprocess_messages` substitutes `{}`), text that is not a JSON object is kept, so a
 * training render shows the policy its own malformed call.
 */
export function parseToolArguments(text: string): ToolArguments {
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

/** A call's arguments, parsed on first use and reused while its text stays the same. */
export function toolCallArguments(call: ToolCall): ToolArguments {
  const text = call.function.arguments;
  const known = parsedByCall.get(call);
  if (known?.text === text) return known.value;
  const value = parseToolArguments(text);
  parsedByCall.set(call, { text, value });
  return value;
}
