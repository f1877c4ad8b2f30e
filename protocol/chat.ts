// OpenAI-style chat messages, tool specs and tool calls: the wire shapes that the edge, the
// store, RULER and the trainer all exchange. Validated with zod at every boundary.
import { z } from 'zod';

export const toolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    /** JSON text, exactly as the model produced it (may be invalid JSON: that is the model's error). */
    arguments: z.string(),
  }),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

export const toolSpecSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ToolSpec = z.infer<typeof toolSpecSchema>;

/** The tools offered in an episode, in the order they were offered (the order the chat template renders). */
export const toolSpecListSchema = z.array(toolSpecSchema).max(1_000);

export const systemMessageSchema = z.object({ role: z.literal('system'), content: z.string() });
export const userMessageSchema = z.object({ role: z.literal('user'), content: z.string() });
export const assistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  tool_calls: z.array(toolCallSchema).optional(),
});
export const toolMessageSchema = z.object({
  role: z.literal('tool'),
  content: z.string(),
  tool_call_id: z.string().min(1),
});

export const chatMessageSchema = z.discriminatedUnion('role', [
  systemMessageSchema,
  userMessageSchema,
  assistantMessageSchema,
  toolMessageSchema,
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;
export type AssistantMessage = z.infer<typeof assistantMessageSchema>;
export type ChatRole = ChatMessage['role'];
