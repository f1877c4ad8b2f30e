// The body of POST /v1/responses that edgerl serves: the subset of OpenAI's Responses API that
// `@ai-sdk/openai` (its default `openai(model)`) and `@openai/agents` send
// (https://platform.openai.com/docs/api-reference/responses/create). Only the top level is checked
// here; input items are checked one by one where they become chat messages (to-chat-request.ts), so
// a bad item is named by its place (`input.3.content.0`). Unknown fields are ignored, as OpenAI's
// harmless ones (`store`, `metadata`, `include`, …) are; the ones that change meaning are refused in
// to-chat-request.ts. Pure.
import { z } from 'zod';

/** A tool as the Responses API offers it: flat, not nested under `function` as in chat completions. */
export const responsesToolSchema = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
export type ResponsesTool = z.infer<typeof responsesToolSchema>;

export const responsesToolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.string(), name: z.string().optional() }),
]);

/** `text.format`: plain text, or JSON (with a schema or without). */
export const responsesTextFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
]);
export type ResponsesTextFormat = z.infer<typeof responsesTextFormatSchema>;

export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1).max(300).nullish(),
  /** A user message as text, or input items (checked one by one in to-chat-request.ts). */
  input: z.union([z.string(), z.array(z.record(z.string(), z.unknown())).min(1).max(10_000)]),
  instructions: z.string().nullish(),
  tools: z.array(responsesToolSchema).max(1_000).nullish(),
  tool_choice: responsesToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.looseObject({ format: responsesTextFormatSchema.nullish() }).nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  /** Logprobs of the output text: `top_logprobs` or `include: ["message.output_text.logprobs"]`. */
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  include: z.array(z.string()).nullish(),
  /** vLLM's extension, as on chat completions: the prompt's and the reply's token ids. */
  return_token_ids: z.boolean().nullish(),
});
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
