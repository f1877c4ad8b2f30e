// The work of one chat completion, up to the engine: validate the body, resolve the model (404
// before any work, as vLLM checks it first), render the prompt, check it against the context window
// and start the choices. Shared by POST /v1/chat/completions and POST /v1/responses (which sends
// the chat request its body translates to); each answers in its own shape.
import { parseChatRequest } from './chat-request.ts';
import type { ChatResponseContext } from './chat-response.ts';
import { rendersHermesToolCalls } from './hermes-tool-call-template.ts';
import { renderChatPrompt } from './render-prompt.ts';
import { type ChoiceRun, type ChoiceUpdate, runChoices } from './run-choices.ts';
import { resolveMaxTokens } from './sampling-fields.ts';
import { requestId, type ServeContext, unixSeconds } from './serve-context.ts';
import { ServeError } from './serve-error.ts';

export interface StartedChatCompletion {
  /** What the body and the chunks are built from (chat-response.ts, chat-stream.ts). */
  readonly context: ChatResponseContext;
  readonly choices: readonly ChoiceRun[];
  /** The choices' progress; iterate it to the end before building a whole body. */
  readonly updates: AsyncIterable<ChoiceUpdate>;
}

export function startChatCompletion(
  serve: ServeContext,
  body: unknown,
  signal: AbortSignal,
): StartedChatCompletion {
  const request = parseChatRequest(body, serve.vocabSize);
  serve.engine.registry.resolve(request.model);
  if (request.settings.guided?.spec.kind === 'tool-calls' && !rendersHermesToolCalls(serve.tokenizer)) {
    throw new ServeError(
      'bad-request',
      "guided tool calls are written as <tool_call>{...}</tool_call> (Hermes), which this model's chat template does not render",
      'tool_choice',
    );
  }
  const promptIds = renderChatPrompt(serve.tokenizer, request);
  const maxTokens = resolveMaxTokens(request.maxTokens, promptIds.length, serve.maxModelLen, {
    prompt: 'messages',
    maxTokens: request.maxTokensField,
  });
  const { settings } = request;
  const { choices, updates } = runChoices(serve.engine, serve.tokenizer, serve.vocabSize, {
    model: request.model,
    prompts: [{ promptIds, maxTokens }],
    settings,
    signal,
  });
  const context: ChatResponseContext = {
    id: requestId('chatcmpl'),
    created: unixSeconds(),
    model: request.model ?? serve.baseName,
    promptIds,
    settings,
    toolsActive: request.toolChoice !== 'none' && request.tools.length > 0,
    namedToolChoice: typeof request.toolChoice === 'object',
    parallelToolCalls: request.parallelToolCalls,
    naming: { tokenizer: serve.tokenizer, tokensAsTokenIds: settings.tokensAsTokenIds },
  };
  return { context, choices, updates };
}
