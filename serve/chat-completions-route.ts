// POST /v1/chat/completions: start the completion (start-chat-completion.ts: validation, the model,
// the prompt, the engine), then answer with one body or an SSE stream.
import { Hono } from 'hono';
import { ChatChunks } from './chat-stream.ts';
import { chatCompletionBody } from './chat-response.ts';
import { readJsonBody, type ServeContext } from './serve-context.ts';
import { sseResponse } from './sse.ts';
import { startChatCompletion } from './start-chat-completion.ts';

export function chatCompletionsRoute(serve: ServeContext): Hono {
  return new Hono().post('/v1/chat/completions', async (c) => {
    const { context, choices, updates } = startChatCompletion(serve, await readJsonBody(c), c.req.raw.signal);
    const { settings } = context;
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
