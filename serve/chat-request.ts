// The body of POST /v1/chat/completions: OpenAI's fields plus vLLM's extras (return_token_ids,
// continue_final_message, chat_template_kwargs, ...), validated with zod into a request whose
// messages are protocol ChatMessages. A bad field is a 400 that names it and says what to send
// (`messages.2.content.0: image parts are not supported by this endpoint; send text parts: …`).
// `tool_choice` "required" or a named function, and tools marked `strict` under "auto", become guided
// tool calls (tool-call-grammar.ts), with vLLM's checks and messages (vllm/entrypoints/openai/protocol.py,
// `check_tool_usage`). Leaves out images and audio (text parts only).
import { z } from 'zod';
import { type ChatMessage, type ToolSpec, toolCallSchema, toolSpecSchema } from '../protocol/chat.ts';
import { issueMessage } from '../protocol/issue-message.ts';
import {
  requestContentSchema,
  requestContentText,
  toolCallIdSchema,
} from '../protocol/openai/request-message-parts.ts';
import {
  type GenerationSettings,
  type GuidedRequest,
  resolveSettings,
  samplingFields,
} from './sampling-fields.ts';
import { ServeError } from './serve-error.ts';
import type { GuidedTool } from './tool-call-grammar.ts';

/** Text, or text parts; images and audio are refused naming the part (request-message-parts.ts). */
const content = requestContentSchema;

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
  z.object({ role: z.literal('tool'), content, tool_call_id: toolCallIdSchema }),
]);

/**
 * A tool as offered: protocol's spec plus OpenAI's `strict` flag, which asks for guided calls and is
 * not rendered (the proxy does not store it either, edge/proxy/request-tools.ts), so a prompt is the
 * same with or without it and the trainer's render matches.
 */
const offeredToolSchema = z.object({
  type: z.literal('function'),
  function: toolSpecSchema.shape.function.extend({ strict: z.boolean().nullish() }),
});

const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
]);

export const chatRequestSchema = z.object({
  ...samplingFields,
  messages: z.array(messageSchema).min(1),
  tools: z.array(offeredToolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  /** OpenAI's default true; false keeps one call (vLLM drops the later ones, vllm-project/vllm#26233). */
  parallel_tool_calls: z.boolean().nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  add_generation_prompt: z.boolean().nullish(),
  continue_final_message: z.boolean().nullish(),
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
});

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

export interface ChatRequest {
  readonly model: string | undefined;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  /**
   * Tools are rendered and tool calls parsed ("auto"), or neither ("none"); "required" and a named
   * function also guide the output into calls.
   */
  readonly toolChoice: ToolChoice;
  /** More than one tool call per answer may be returned (and, under "required", generated). */
  readonly parallelToolCalls: boolean;
  readonly maxTokens: number | undefined;
  /** Which field set maxTokens, for error messages. */
  readonly maxTokensField: 'max_completion_tokens' | 'max_tokens';
  readonly addGenerationPrompt: boolean;
  readonly continueFinalMessage: boolean;
  readonly templateKwargs: Readonly<Record<string, unknown>>;
  readonly settings: GenerationSettings;
}

const text = requestContentText;

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
    // Every issue in words that name its field (issue-message.ts); `param` is the first one's field.
    const issues = parsed.error.issues.map((issue) => issueMessage(issue, body));
    const message = issues
      .map(({ path, message }) => `${path.length > 0 ? path.join('.') : '(root)'}: ${message}`)
      .join('; ');
    throw new ServeError('bad-request', message, issues[0]?.path.join('.') || null);
  }
  const request = parsed.data;
  const offered = request.tools ?? [];
  const tools: ToolSpec[] = offered.map(({ type, function: { strict: _, ...spec } }) => ({
    type,
    function: spec,
  }));
  // OpenAI and vLLM: "none" without tools, "auto" when tools are given.
  const given = request.tool_choice ?? (tools.length > 0 ? 'auto' : 'none');
  const toolChoice: ToolChoice = typeof given === 'string' ? given : { name: given.function.name };
  const parallelToolCalls = request.parallel_tool_calls ?? true;
  const guidedTools = guidedToolCalls(toolChoice, offered.map(guidedTool), parallelToolCalls);
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
    toolChoice,
    parallelToolCalls,
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    maxTokensField: request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens',
    addGenerationPrompt,
    continueFinalMessage,
    templateKwargs: request.chat_template_kwargs ?? {},
    settings: resolveSettings(
      request,
      { enabled: request.logprobs ?? false, top: request.top_logprobs ?? 0 },
      vocabSize,
      guidedTools,
    ),
  };
}

const guidedTool = (tool: z.infer<typeof offeredToolSchema>): GuidedTool => ({
  name: tool.function.name,
  parameters: tool.function.parameters,
  strict: tool.function.strict === true,
});

/** The guided tool calls `toolChoice` asks for, checked as vLLM checks them. */
function guidedToolCalls(
  toolChoice: ToolChoice,
  tools: readonly GuidedTool[],
  parallel: boolean,
): GuidedRequest[] {
  if (toolChoice === 'none') return [];
  if (toolChoice === 'auto') {
    const strict = tools.some((tool) => tool.strict);
    return strict
      ? [{ spec: { kind: 'tool-calls', tools, mode: { kind: 'strict-auto' } }, field: 'tools' }]
      : [];
  }
  if (tools.length === 0) {
    throw new ServeError('bad-request', 'When using `tool_choice`, `tools` must be set.', 'tool_choice');
  }
  if (toolChoice === 'required') {
    return [
      { spec: { kind: 'tool-calls', tools, mode: { kind: 'required', parallel } }, field: 'tool_choice' },
    ];
  }
  if (!tools.some((tool) => tool.name === toolChoice.name)) {
    throw new ServeError(
      'bad-request',
      'The tool specified in `tool_choice` does not match any of the specified `tools`',
      'tool_choice',
    );
  }
  return [
    {
      spec: { kind: 'tool-calls', tools, mode: { kind: 'named', name: toolChoice.name } },
      field: 'tool_choice',
    },
  ];
}
