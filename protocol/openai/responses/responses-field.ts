// A field of the chat request a Responses body was translated to (to-chat-request.ts), named as the
// client sent it: a 400 about `tools.0.function.parameters.properties.when.format` must point at
// `tools.0.parameters.properties.when.format`, since that is what the client wrote. Shared by the edge's
// proxy and serve-model, which both check the translated chat request. Pure.

/** Chat prefixes and the Responses names they came from, most specific first. */
const renamedPrefixes: readonly (readonly [RegExp, (match: RegExpExecArray) => string])[] = [
  [/^tools\.(\d+)\.function(?=\.|$)/, (match) => `tools.${match[1]}`],
  [/^response_format\.json_schema\.schema(?=\.|$)/, () => 'text.format.schema'],
  [/^response_format(?=\.|$)/, () => 'text.format'],
  [/^(max_tokens|max_completion_tokens)$/, () => 'max_output_tokens'],
];

/**
 * The Responses name of `chatField`, or undefined where the name is the same in both (`tool_choice`,
 * `temperature`, `model`). `sources[N]` is the input item that chat message N came from.
 */
export function responsesField(chatField: string, sources: readonly string[]): string | undefined {
  const message = /^messages\.(\d+)(.*)$/.exec(chatField);
  if (message) {
    const source = sources[Number(message[1])];
    if (source === undefined) return undefined;
    // A content part keeps its place; other chat names (tool_call_id, tool_calls.N) are the item's own.
    return message[2]?.startsWith('.content') ? `${source}${message[2]}` : source;
  }
  for (const [pattern, name] of renamedPrefixes) {
    const match = pattern.exec(chatField);
    if (match) return `${name(match)}${chatField.slice(match[0].length)}`;
  }
  return undefined;
}

/**
 * `message` with the field it begins with renamed the same way: `tools.0.function.parameters.x.format: …`
 * (as 400s begin, often deeper than the error's own field) or `'max_tokens' is too large …` (vLLM's words).
 */
export function renameInMessage(message: string, sources: readonly string[]): string {
  const leading = /^([\w.]+)(?=: )|^'([\w.]+)'/.exec(message);
  const chatField = leading?.[1] ?? leading?.[2];
  const field = chatField === undefined ? undefined : responsesField(chatField, sources);
  if (field === undefined || chatField === undefined) return message;
  return message.replace(chatField, field);
}
