// Where an OpenAI-compatible API root takes chat completions. Does not check the root is a URL:
// callers that take it from users check that where they read it.

/** `http://host:8000/v1/` → `http://host:8000/v1/chat/completions` (trailing slashes dropped). */
export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}
