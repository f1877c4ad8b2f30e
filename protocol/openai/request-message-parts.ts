// The parts of an OpenAI chat request's messages that both OpenAI-compatible endpoints (the edge's
// recording proxy, serve-model) validate alike, with refusals that say what to send instead: content
// as text or text parts, and a tool message's `tool_call_id`. Leaves out images, audio and files: a
// turn stores text, and serve-model's models read text only.
import { z } from 'zod';

/** What a non-text part is called in a refusal; OpenAI's part types (https://platform.openai.com/docs/api-reference/chat/create). */
const partNames: Readonly<Record<string, string>> = {
  image_url: 'image parts',
  input_audio: 'audio parts',
  file: 'file parts',
};

function partRefusal(part: unknown): string {
  const type = (part as { type?: unknown } | undefined)?.type;
  if (type === 'text') return 'a text part needs its text: {"type": "text", "text": "…"}';
  const name = typeof type === 'string' ? (partNames[type] ?? `"${type}" parts`) : 'parts without a type';
  return `${name} are not supported by this endpoint; send text parts: {"type": "text", "text": "…"}`;
}

/** One content part: `{"type": "text", "text": …}`; other keys (such as `cache_control`) are kept, unused. */
export const requestTextPartSchema = z
  .looseObject({ type: z.string(), text: z.string().optional() })
  .refine((part) => part.type === 'text' && part.text !== undefined, {
    error: (issue) => partRefusal(issue.input),
  });

/** A message's content: text, or text parts (joined by whoever reads them). */
export const requestContentSchema = z.union([z.string(), z.array(requestTextPartSchema)]);
export type RequestContent = z.infer<typeof requestContentSchema>;

/** The text of a content: the parts' texts joined without a separator (what a turn stores and a prompt renders). */
export function requestContentText(content: RequestContent): string {
  return typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('');
}

/**
 * A tool message's `tool_call_id`: the id of the assistant's tool call it answers. A custom check, so
 * its refusal keeps these words (issue-message.ts words type mismatches its own way).
 */
export const toolCallIdSchema = z.custom<string>((value) => typeof value === 'string' && value.length > 0, {
  error: (issue) =>
    issue.input === undefined
      ? 'is required on a tool message: the id of the assistant tool call it answers'
      : 'must be the id (a non-empty string) of the assistant tool call this message answers',
});
