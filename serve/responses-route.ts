// POST /v1/responses: OpenAI's Responses API over the chat completions path, as vLLM serves both.
// The body is translated to the chat request that carries the same conversation
// (protocol/openai/responses/to-chat-request.ts), run as a chat completion (start-chat-completion.ts),
// and the completion or its chunks answered as a Responses object or its events. Leaves out stored
// responses (`previous_response_id`), built-in tools and non-text input: a 400 that says so.
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { formatIssues } from '../protocol/format-issues.ts';
import { errorMessage } from '../protocol/error-message.ts';
import type { ResponseContext } from '../protocol/openai/responses/response-envelope.ts';
import { ResponseEventStream } from '../protocol/openai/responses/response-event-stream.ts';
import { responsesRequestSchema } from '../protocol/openai/responses/responses-request.ts';
import { renameInMessage, responsesField } from '../protocol/openai/responses/responses-field.ts';
import { type ChatRequestTranslation, toChatRequest } from '../protocol/openai/responses/to-chat-request.ts';
import { toResponseObject } from '../protocol/openai/responses/to-response-object.ts';
import { ChatChunks } from './chat-stream.ts';
import { chatCompletionBody } from './chat-response.ts';
import { readJsonBody, type ServeContext, unixSeconds } from './serve-context.ts';
import { ServeError } from './serve-error.ts';
import { startChatCompletion } from './start-chat-completion.ts';

export function responsesRoute(serve: ServeContext): Hono {
  return new Hono().post('/v1/responses', async (c) => {
    const parsed = responsesRequestSchema.safeParse(await readJsonBody(c));
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new ServeError('bad-request', formatIssues(parsed.error), first?.path.join('.') || null);
    }
    const request = parsed.data;
    const translated = toChatRequest(request);
    if (!translated.ok) {
      throw new ServeError('bad-request', `${translated.field}: ${translated.message}`, translated.field);
    }
    const { context, choices, updates } = startResponse(serve, translated, c.req.raw.signal);
    const response: ResponseContext = {
      id: `resp_${crypto.randomUUID().replaceAll('-', '')}`,
      createdAt: unixSeconds(),
      request,
    };
    if (!context.settings.stream) {
      for await (const _ of updates) {
        // The outputs collect everything; the body is built once the choice has finished.
      }
      return c.json(toResponseObject(chatCompletionBody(context, choices), response));
    }
    const chunks = new ChatChunks(context, choices);
    const events = new ResponseEventStream(response);
    // Responses events are named (`event: response.created`) and end with the terminal event, no [DONE].
    return streamSSE(c, async (stream) => {
      const send = async (list: readonly { type: string }[]) => {
        for (const event of list) await stream.writeSSE({ event: event.type, data: JSON.stringify(event) });
      };
      try {
        await send(events.start());
        for (const chunk of chunks.opening()) await send(events.push(chunk));
        for await (const update of updates) {
          const chunk = chunks.next(update);
          if (chunk) await send(events.push(chunk));
        }
        await send(events.push(chunks.usage()));
      } catch (error) {
        if (stream.aborted) return; // the client is gone: nobody to tell
        events.push({ error: { message: errorMessage(error) } });
      }
      if (!stream.aborted) await send(events.finish());
    });
  });
}

/** The chat completion the body translated to; a refusal of its chat fields names the client's fields. */
function startResponse(
  serve: ServeContext,
  translated: Extract<ChatRequestTranslation, { ok: true }>,
  signal: AbortSignal,
) {
  try {
    return startChatCompletion(serve, translated.body, signal);
  } catch (error) {
    if (!(error instanceof ServeError) || error.param === null) throw error;
    const field = responsesField(error.param, translated.sources);
    if (field === undefined) throw error;
    const message = renameInMessage(error.message, translated.sources);
    throw new ServeError(error.code, message, field, { cause: error });
  }
}
