// A Responses API request as the chat completions request that carries the same conversation: the
// `instructions` as a system message, input items as messages (an assistant's `message` and the
// `function_call` items after it are one assistant message with tool calls, as the chat API holds
// them), flat function tools nested under `function`, `text.format` as `response_format`,
// `max_output_tokens` as `max_tokens`. Refuses what would change the meaning of a call edgerl cannot
// honour (server-side state, built-in tools, non-text content) with the field and what to do instead.
// Reasoning items are dropped: a chat request has no place for them. Pure.
import { z } from 'zod';
import { assertNever } from '../../statuses.ts';
import { isItemReference } from './item-references.ts';
import type { ResponsesRequest, ResponsesTextFormat, ResponsesTool } from './responses-request.ts';

type Json = Record<string, unknown>;

export type ChatRequestTranslation =
  | {
      readonly ok: true;
      /** The chat completions body. */
      readonly body: Json;
      /** Where each of its messages came from (`instructions`, `input`, `input.3`), to name a message at fault. */
      readonly sources: readonly string[];
    }
  | { readonly ok: false; readonly field: string; readonly message: string };

/** Fields that need state or servers edgerl does not have; each with what to send instead. */
const refusedFields = {
  previous_response_id:
    'edgerl keeps no responses: send the whole conversation as input items (leave previousResponseId unset)',
  conversation: 'edgerl keeps no conversations: send the whole conversation as input items',
  background:
    'background responses are not supported: leave background unset and wait for, or stream, the reply',
  prompt: "stored prompts live on OpenAI's servers: send instructions and input instead",
} as const;

const textPartTypes = new Set(['input_text', 'output_text']);
const textPart = z
  .looseObject({ type: z.string(), text: z.string().optional() })
  .refine(
    (part) => textPartTypes.has(part.type) && typeof part.text === 'string',
    'only input_text and output_text parts are supported (images, files and audio cannot be stored as turns)',
  );
const content = z.union([z.string(), z.array(textPart)]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content,
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: content,
});

type ItemKind = 'message' | 'function_call' | 'function_call_output' | 'reasoning';
const itemKinds = new Set<string>(['message', 'function_call', 'function_call_output', 'reasoning']);

class Refusal extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export function toChatRequest(request: ResponsesRequest): ChatRequestTranslation {
  try {
    return { ok: true, ...translate(request) };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, field: error.field, message: error.message };
  }
}

function translate(request: ResponsesRequest): { body: Json; sources: string[] } {
  for (const [field, message] of Object.entries(refusedFields)) {
    const value = (request as Json)[field];
    if (value !== undefined && value !== null && value !== false) throw new Refusal(field, message);
  }
  const messages: Json[] = [];
  const sources: string[] = [];
  if (request.instructions) {
    messages.push({ role: 'system', content: request.instructions });
    sources.push('instructions');
  }
  if (typeof request.input === 'string') {
    messages.push({ role: 'user', content: request.input });
    sources.push('input');
  } else {
    request.input.forEach((item, position) => {
      addItem(messages, sources, item, `input.${position}`);
    });
  }
  const wantsLogprobs =
    request.top_logprobs != null || (request.include ?? []).includes('message.output_text.logprobs');
  const body: Json = {
    ...(request.model != null ? { model: request.model } : {}),
    messages,
    ...(request.tools != null && request.tools.length > 0 ? { tools: request.tools.map(chatTool) } : {}),
    ...(request.tool_choice != null ? { tool_choice: chatToolChoice(request.tool_choice) } : {}),
    ...(request.parallel_tool_calls != null ? { parallel_tool_calls: request.parallel_tool_calls } : {}),
    ...responseFormat(request.text?.format ?? undefined),
    ...(request.max_output_tokens != null ? { max_tokens: request.max_output_tokens } : {}),
    ...(request.temperature != null ? { temperature: request.temperature } : {}),
    ...(request.top_p != null ? { top_p: request.top_p } : {}),
    ...(request.seed != null ? { seed: request.seed } : {}),
    ...(wantsLogprobs ? { logprobs: true, top_logprobs: request.top_logprobs ?? 0 } : {}),
    ...(request.return_token_ids != null ? { return_token_ids: request.return_token_ids } : {}),
    // The usage chunk carries the token counts `response.completed` reports.
    ...(request.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
  return { body, sources };
}

function itemKind(item: Json, field: string): ItemKind {
  // The recording proxy resolves the references it can (item-references.ts) before translating.
  if (isItemReference(item)) {
    throw new Refusal(
      `${field}.type`,
      'serve-model keeps no responses, so an item_reference has nothing to point to: send the item itself (with @ai-sdk/openai, providerOptions: { openai: { store: false } }), or record through the edge, which resolves the message ids it returned',
    );
  }
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  if (typeof type !== 'string' || !itemKinds.has(type)) {
    throw new Refusal(
      `${field}.type`,
      `${JSON.stringify(type ?? null)} is not an input item edgerl records: send message, function_call, function_call_output (or reasoning, which is dropped) items`,
    );
  }
  return type as ItemKind;
}

function parseItem<T extends z.ZodType>(schema: T, item: Json, field: string): z.output<T> {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [field, ...(issue?.path ?? []).map(String)].join('.');
  throw new Refusal(path, issue?.message ?? 'invalid');
}

function addItem(messages: Json[], sources: string[], item: Json, field: string): void {
  const kind = itemKind(item, field);
  switch (kind) {
    case 'message': {
      const message = parseItem(messageItem, item, field);
      const text = textOf(message.content);
      const last = messages.at(-1);
      // One assistant message in the chat API may be several items here (text, then its calls).
      if (message.role === 'assistant' && last?.role === 'assistant') {
        last.content = `${(last.content as string | null) ?? ''}${text}`;
        return;
      }
      messages.push({ role: message.role, content: text });
      sources.push(field);
      return;
    }
    case 'function_call': {
      const call = parseItem(functionCallItem, item, field);
      const toolCall = {
        id: call.call_id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      };
      const last = messages.at(-1);
      if (last?.role === 'assistant') {
        last.tool_calls = [...((last.tool_calls as Json[] | undefined) ?? []), toolCall];
        return;
      }
      messages.push({ role: 'assistant', content: null, tool_calls: [toolCall] });
      sources.push(field);
      return;
    }
    case 'function_call_output': {
      const output = parseItem(functionCallOutputItem, item, field);
      messages.push({ role: 'tool', tool_call_id: output.call_id, content: textOf(output.output) });
      sources.push(field);
      return;
    }
    case 'reasoning':
      return;
    default:
      assertNever(kind);
  }
}

function textOf(value: z.infer<typeof content>): string {
  return typeof value === 'string' ? value : value.map((part) => part.text ?? '').join('');
}

function chatTool(tool: ResponsesTool, position: number): Json {
  if (tool.type !== 'function' || !tool.name) {
    throw new Refusal(
      tool.type !== 'function' ? `tools.${position}.type` : `tools.${position}.name`,
      tool.type !== 'function'
        ? `${JSON.stringify(tool.type)}: only function tools are served (built-in tools such as web_search run on OpenAI's servers); offer it as a function tool your agent runs`
        : 'a function tool needs a name',
    );
  }
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description != null ? { description: tool.description } : {}),
      ...(tool.parameters != null ? { parameters: tool.parameters } : {}),
      ...(tool.strict != null ? { strict: tool.strict } : {}),
    },
  };
}

function chatToolChoice(choice: NonNullable<ResponsesRequest['tool_choice']>): unknown {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && choice.name) return { type: 'function', function: { name: choice.name } };
  throw new Refusal(
    'tool_choice',
    `${JSON.stringify(choice.type)}: send "auto", "none", "required" or {"type": "function", "name": …}`,
  );
}

function responseFormat(format: ResponsesTextFormat | undefined): Json {
  if (!format) return {};
  switch (format.type) {
    case 'text':
      return {};
    case 'json_object':
      return { response_format: { type: 'json_object' } };
    case 'json_schema':
      return {
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: format.name,
            schema: format.schema,
            ...(format.description != null ? { description: format.description } : {}),
            ...(format.strict != null ? { strict: format.strict } : {}),
          },
        },
      };
    default:
      return assertNever(format);
  }
}
