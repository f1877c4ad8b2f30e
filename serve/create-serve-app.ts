// The Hono app of the local inference endpoint: the subset of vLLM's OpenAI-compatible API that edgerl
// uses (models, chat and text completions, responses, runtime LoRA loading, health), an optional API key on /v1,
// and the one place where errors become OpenAI-shaped JSON with their status code. Runtime-neutral:
// serve-model.ts binds it to Node.
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GuessLimiter } from '../protocol/guess-limiter.ts';
import { apiKeyAuth } from './api-key-auth.ts';
import { chatCompletionsRoute } from './chat-completions-route.ts';
import { completionsRoute } from './completions-route.ts';
import { loraAdapterRoute } from './lora-adapter-route.ts';
import { modelsRoute } from './models-route.ts';
import { responsesRoute } from './responses-route.ts';
import type { ServeContext } from './serve-context.ts';
import { errorBody, ServeError } from './serve-error.ts';

export function createServeApp(serve: ServeContext): Hono {
  const app = new Hono();
  if (serve.apiKey) {
    const limiter = serve.limiter ?? new GuessLimiter({ log: (line) => console.warn(line) });
    app.use('/v1/*', apiKeyAuth({ apiKey: serve.apiKey, limiter }));
  }
  // Hono's limit checks Content-Length and counts streamed bytes, so a huge body is refused before it
  // is buffered (an unlimited one was read whole: 300 MB took 30 s and kept 3 GB resident).
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: serve.maxBodyBytes,
      onError: () => {
        throw new ServeError(
          'payload-too-large',
          `request body is larger than the limit of ${serve.maxBodyBytes} bytes (--max-body-bytes)`,
        );
      },
    }),
  );
  app.get('/health', (c) => c.body(null, 200));
  app.route('/', modelsRoute(serve));
  app.route('/', chatCompletionsRoute(serve));
  app.route('/', completionsRoute(serve));
  app.route('/', responsesRoute(serve));
  app.route('/', loraAdapterRoute(serve));
  app.notFound((c) => {
    const error = new ServeError('not-found', `no route for ${c.req.method} ${c.req.path}`);
    return c.json(errorBody(error), error.status);
  });
  app.onError((cause, c) => {
    // Only ServeErrors carry client-facing messages and statuses; anything else is our fault.
    const error =
      cause instanceof ServeError
        ? cause
        : new ServeError('internal', `internal error: ${cause.message}`, null, { cause });
    if (error.code === 'internal') console.error('edgerl serve-model:', cause);
    return c.json(errorBody(error), error.status);
  });
  return app;
}
