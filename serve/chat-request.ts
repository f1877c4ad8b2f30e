// The body of POST /v1/chat/completions: OpenAI's fields plus vLLM's extras (return_token_ids,
// continue_final_message, chat_template_kwargs, ...), validated with zod into a request whose
// messages are protocol ChatMessages. A bad field is a 400 that names it (`messages.2.content: ...`).
// Leaves out images and audio (text parts only) and tool_choice "required"/named functions, which
// vLLM implements with guided decoding.
import { z } from 'zod';
import { type ChatMessage, type ToolSpec, toolCallSchema, toolSpecSchema } from '../protocol/chat.ts';
import { formatIssues } from '../protocol/format-issues.ts';
import { type GenerationSettings, resolveSettings, samplingFields } from './sampling-fields.ts';
import { ServeError } from './serve-error.ts';

const content = z.union([
  z.string(),
  z.array(
    z
      .object({ type: z.string(), text: z.string().optional() })
      .refine((part) => part.type === 'text' && part.text !== undefined, {
        message: 'only {"type": "text", "text": ...} content parts are supported',
      }),
  ),
]);

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content }),
  /** OpenAI's newer name for system instructions; templates know only "system". */
  z.object({ role: z.literal('developer'), content }),
  z.object({ role: z.literal('user'), content }),
  z.object({
    role: z.literal('assistant'),
    content: content.nullish(),
    tool_calls: z.array(toolCallSchema).nullish(),
  }),
  z.object({ role: z.literal('tool'), content, tool_call_id: z.string().min(1) }),
]);

const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
]);

export const chatRequestSchema = z.object({
  ...samplingFields,
  messages: z.array(messageSchema).min(1),
  tools: z.array(toolSpecSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  add_generation_prompt: z.boolean().nullish(),
  continue_final_message: z.boolean().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
});

export interface ChatRequest {
  readonly model: string | undefined;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  /** Tools are rendered and tool calls parsed ("auto"), or neither ("none"). */
  readonly toolChoice: 'auto' | 'none';
  readonly maxTokens: number | undefined;
  /** Which field set maxTokens, for error messages. */
  readonly maxTokensField: 'max_completion_tokens' | 'max_tokens';
  readonly addGenerationPrompt: boolean;
  readonly continueFinalMessage: boolean;
  readonly templateKwargs: Readonly<Record<string, unknown>>;
  readonly settings: GenerationSettings;
}

function text(value: z.infer<typeof content>): string {
  return typeof value === 'string' ? value : value.map((part) => part.text ?? '').join('');
}

function toChatMessage(message: z.infer<typeof messageSchema>): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text(message.content) };
    case 'user':
      return { role: 'user', content: text(message.content) };
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      return {
        role: 'assistant',
        content: message.content == null ? null : text(message.content),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      };
    }
    case 'tool':
      return { role: 'tool', content: text(message.content), tool_call_id: message.tool_call_id };
  }
}

/** Validates a parsed JSON body; `vocabSize` bounds token ids in logit_bias and stop_token_ids. */
export function parseChatRequest(body: unknown, vocabSize: number): ChatRequest {
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new ServeError('bad-request', formatIssues(parsed.error), first?.path.join('.') || null);
  }
  const request = parsed.data;
  const tools = request.tools ?? [];
  // OpenAI and vLLM: "none" without tools, "auto" when tools are given.
  const choice = request.tool_choice ?? (tools.length > 0 ? 'auto' : 'none');
  if (choice !== 'auto' && choice !== 'none') {
    throw new ServeError(
      'bad-request',
      `tool_choice ${JSON.stringify(choice)} is not supported by edgerl serve-model; use "auto" or "none"`,
      'tool_choice',
    );
  }
  if (request.top_logprobs && !request.logprobs) {
    throw new ServeError('bad-request', 'top_logprobs needs logprobs: true', 'top_logprobs');
  }
  const continueFinalMessage = request.continue_final_message ?? false;
  const addGenerationPrompt = request.add_generation_prompt ?? !continueFinalMessage;
  if (continueFinalMessage && addGenerationPrompt) {
    throw new ServeError(
      'bad-request',
      'continue_final_message and add_generation_prompt cannot both be true',
      'continue_final_message',
    );
  }
  return {
    model: request.model ?? undefined,
    messages: request.messages.map(toChatMessage),
    tools,
    toolChoice: choice,
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    maxTokensField: request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens',
    addGenerationPrompt,
    continueFinalMessage,
    templateKwargs: request.chat_template_kwargs ?? {},
    settings: resolveSettings(
      request,
      { enabled: request.logprobs ?? false, top: request.top_logprobs ?? 0 },
      vocabSize,
    ),
  };
}
