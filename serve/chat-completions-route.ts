// POST /v1/chat/completions: validate, resolve the model (404 before any work, as vLLM checks it
// first), render the prompt, check it against the context window, run the choices on the engine,
// then answer with one body or an SSE stream.
import { Hono } from 'hono';
import { ChatChunks } from './chat-stream.ts';
import { parseChatRequest } from './chat-request.ts';
import { type ChatResponseContext, chatCompletionBody } from './chat-response.ts';
import { rendersHermesToolCalls } from './hermes-tool-call-template.ts';
import { renderChatPrompt } from './render-prompt.ts';
import { runChoices } from './run-choices.ts';
import { resolveMaxTokens } from './sampling-fields.ts';
import { readJsonBody, requestId, type ServeContext, unixSeconds } from './serve-context.ts';
import { ServeError } from './serve-error.ts';
import { sseResponse } from './sse.ts';

export function chatCompletionsRoute(serve: ServeContext): Hono {
  return new Hono().post('/v1/chat/completions', async (c) => {
    const request = parseChatRequest(await readJsonBody(c), serve.vocabSize);
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
      signal: c.req.raw.signal,
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
    if (!settings.stream) {
      for await (const _ of updates) {
        // The outputs collect everything; the body is built once every choice has finished.
      }
      return c.json(chatCompletionBody(context, choices));
    }
    const chunks = new ChatChunks(context, choices);
    return sseResponse(c, async (send) => {
      for (const chunk of chunks.opening()) await send(chunk);
      for await (const update of updates) {
        const chunk = chunks.next(update);
        if (chunk) await send(chunk);
      }
      if (settings.includeUsage) await send(chunks.usage());
    });
  });
}
