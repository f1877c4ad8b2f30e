// The non-streaming chat completion body, shaped as vLLM returns it: choices with the assistant
// message (Hermes `<tool_call>` blocks parsed into OpenAI `tool_calls` and finish_reason
// "tool_calls", as `--enable-auto-tool-choice --tool-call-parser hermes` does; "stop" for a named tool_choice), `stop_reason`,
// per-choice `token_ids` and top-level `prompt_token_ids` when `return_token_ids` is set, and usage.
// A call cut by max_tokens is no call: its raw text stays in the content and the finish is "length".
import type { ToolCall } from '../protocol/chat.ts';
import { parseAssistantOutput } from '../model/tokenizer/index.ts';
import { chatLogprobs, type ChatLogprobContent, type TokenNaming } from './logprobs-format.ts';
import type { ChoiceRun } from './run-choices.ts';
import type { FinishReason } from './sequence-output.ts';
import type { GenerationSettings } from './sampling-fields.ts';

export interface ChatResponseContext {
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** The name the request asked for (base or adapter), echoed as `model`. */
  readonly model: string;
  readonly promptIds: readonly number[];
  readonly settings: GenerationSettings;
  /** Tools were offered and tool_choice is not "none": parse tool calls out of the text. */
  readonly toolsActive: boolean;
  /**
   * tool_choice named a function: its call finishes with "stop", as in OpenAI's API (vLLM:
   * "tool_calls" for "auto" or "required" tool calls, "stop" for named ones, serving_chat.py).
   */
  readonly namedToolChoice: boolean;
  /** parallel_tool_calls: false keeps only the first call (vLLM, vllm-project/vllm#26233). */
  readonly parallelToolCalls: boolean;
  readonly naming: TokenNaming;
}

export interface AssistantReply {
  content: string | null;
  toolCalls: ToolCall[];
}

/** Call ids hash the text with this salt, so choices and requests get distinct ids. */
export function toolCallSalt(context: ChatResponseContext, index: number): string {
  return `${context.id}:${index}`;
}

export function assistantReply(context: ChatResponseContext, index: number, text: string): AssistantReply {
  if (!context.toolsActive) return { content: text, toolCalls: [] };
  const parsed = parseAssistantOutput(text, { idSalt: toolCallSalt(context, index) });
  // Without calls the text goes back as generated (vLLM returns it untouched).
  const toolCalls = context.parallelToolCalls ? parsed.toolCalls : parsed.toolCalls.slice(0, 1);
  return toolCalls.length > 0 ? { content: parsed.content, toolCalls } : { content: text, toolCalls: [] };
}

/**
 * "tool_calls" only where the model stopped after its calls: an output cut by max_tokens reports
 * "length" even when earlier calls parsed, as vLLM does (serving_chat.py reports the engine's reason
 * unless the hermes parser returned calls, and its parser returns none when the cut call's JSON does
 * not load, the raw output becoming the content: hermes_tool_parser.py `extract_tool_calls`). Unlike
 * vLLM, calls that closed before the cut are kept: the client can still see and run them.
 */
export function chatFinishReason(context: ChatResponseContext, calls: number, reason: FinishReason | null) {
  if (calls > 0 && !context.namedToolChoice && (reason === 'stop' || reason === null)) return 'tool_calls';
  return reason;
}

export function usage(promptTokens: number, choices: readonly ChoiceRun[]) {
  const completion = choices.reduce((sum, choice) => sum + choice.output.tokenIds.length, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
  };
}

export function chatCompletionBody(context: ChatResponseContext, choices: readonly ChoiceRun[]) {
  const { settings } = context;
  return {
    id: context.id,
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: choices.map(({ index, output }) => {
      const reply = assistantReply(context, index, output.text);
      const logprobs: { content: ChatLogprobContent[] } | null = settings.logprobs
        ? { content: chatLogprobs(output.samples, context.naming) }
        : null;
      return {
        index,
        message: {
          role: 'assistant',
          content: reply.content,
          ...(reply.toolCalls.length > 0 ? { tool_calls: reply.toolCalls } : {}),
        },
        logprobs,
        finish_reason: chatFinishReason(context, reply.toolCalls.length, output.finishReason),
        stop_reason: output.stopReason,
        token_ids: settings.returnTokenIds ? [...output.tokenIds] : null,
      };
    }),
    usage: usage(context.promptIds.length, choices),
    prompt_token_ids: settings.returnTokenIds ? [...context.promptIds] : null,
  };
}
