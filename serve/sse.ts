// Server-sent events in the OpenAI/vLLM stream format: `data: <json>` per chunk and `data: [DONE]` at
// the end. A failure after the stream has started cannot change the status code any more, so it goes
// out as a `data: {"error": {...}}` chunk before [DONE], as vLLM's streaming generators do.
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { errorBody, ServeError } from './serve-error.ts';
import { errorMessage } from '../protocol/error-message.ts';

export type SendChunk = (chunk: object) => Promise<void>;

export function sseResponse(c: Context, produce: (send: SendChunk) => Promise<void>): Response {
  return streamSSE(c, async (stream) => {
    const send: SendChunk = (chunk) => stream.writeSSE({ data: JSON.stringify(chunk) });
    try {
      await produce(send);
    } catch (error) {
      if (stream.aborted) return; // the client is gone: nobody to tell
      const failure =
        error instanceof ServeError
          ? error
          : new ServeError('internal', errorMessage(error), null, {
              cause: error,
            });
      await send(errorBody(failure));
    }
    if (!stream.aborted) await stream.writeSSE({ data: '[DONE]' });
  });
}
