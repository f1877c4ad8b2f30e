// Which kind of client a request's errors are answered for: an OpenAI SDK (the OpenAI-compatible
// routes: the trajectory URL's /t/<key>/v1/… and /v1's chat, responses and models) or edgerl's own
// API. Pure: a path in, a surface out. The statuses each surface gets are error-response.ts's.

export type ErrorSurface = 'edge' | 'openai';

/**
 * The /v1 resources an OpenAI SDK calls (its `chat.completions`, `responses` and `models`); everything
 * under a trajectory URL's /v1 is one of them too (routes/trajectory-url.ts mounts only those).
 */
const openAiResources: ReadonlySet<string> = new Set(['chat', 'responses', 'models']);

export function errorSurface(path: string): ErrorSurface {
  if (/^\/t\/[^/]+\/v1(\/|$)/.test(path)) return 'openai';
  const match = /^\/v1\/([^/]+)/.exec(path);
  return match && openAiResources.has(match[1] as string) ? 'openai' : 'edge';
}
