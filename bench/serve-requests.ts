// bench:serve's load: streaming chat requests against a serve-model, timed per request, and a group of
// them sent at once. Definitions: time to first token = request sent → first streamed token; decode
// tokens/s = tokens after each request's first, summed over the group, divided by the time from the
// group's first first-token to its last token (so prefill and queueing count in TTFT, not in decode
// speed).
import type { ServingModel } from '../serve/serve-model.ts';

export interface Timing {
  sent: number;
  first: number;
  end: number;
  tokens: number;
  promptTokens: number;
}

export interface GroupFigures {
  decodeTokensPerSecond: number;
  /** Completion tokens over the group's whole time, first request sent → last token (prefill included). */
  tokensPerSecond: number;
  promptTokens: number;
  ttftMs: number;
  steps: number;
  rowsPerStep: number;
}

/** One streaming chat request of exactly `tokens` tokens (the caller's `extra` must make it so). */
export async function streamChat(
  url: string,
  model: string,
  episode: number,
  seed: number,
  tokens: number,
  extra: Record<string, unknown>,
  /** Words appended to the question, to make the prompt as long as an episode's later turns. */
  padding = 0,
): Promise<Timing> {
  const sent = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [
        {
          role: 'user',
          content: `Episode ${episode}: look up key ${episode * 7} and report its value.${' then the next'.repeat(padding)}`,
        },
      ],
      max_tokens: tokens,
      ...extra,
      seed,
      stream: true,
      return_token_ids: true,
    }),
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  let first = 0;
  let count = 0;
  let promptTokens = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data) as { prompt_token_ids?: number[]; choices: { token_ids?: number[] }[] };
      promptTokens ||= chunk.prompt_token_ids?.length ?? 0;
      const ids = chunk.choices[0]?.token_ids?.length ?? 0;
      if (ids > 0 && first === 0) first = performance.now();
      count += ids;
    }
  }
  if (count !== tokens) throw new Error(`expected ${tokens} tokens, got ${count}`);
  return { sent, first, end: performance.now(), tokens: count, promptTokens };
}

/** `size` requests at once (seeds round·100 + i); the group's figures and the engine's step counts. */
export async function timeGroup(
  serving: ServingModel,
  options: {
    model: string;
    size: number;
    round: number;
    tokens: number;
    extra: Record<string, unknown>;
    padding?: number;
  },
): Promise<GroupFigures> {
  const { size, round, tokens } = options;
  const before = serving.engine.stats();
  const timings = await Promise.all(
    Array.from({ length: size }, (_, i) =>
      streamChat(serving.url, options.model, i, round * 100 + i, tokens, options.extra, options.padding),
    ),
  );
  const after = serving.engine.stats();
  const firstToken = Math.min(...timings.map((t) => t.first));
  const lastToken = Math.max(...timings.map((t) => t.end));
  const decoded = timings.reduce((sum, t) => sum + t.tokens - 1, 0);
  return {
    decodeTokensPerSecond: decoded / ((lastToken - firstToken) / 1000),
    tokensPerSecond:
      timings.reduce((sum, t) => sum + t.tokens, 0) /
      ((lastToken - Math.min(...timings.map((t) => t.sent))) / 1000),
    promptTokens: timings.reduce((sum, t) => sum + t.promptTokens, 0) / size,
    ttftMs: timings.reduce((sum, t) => sum + t.first - t.sent, 0) / size,
    steps: after.decodeSteps - before.decodeSteps,
    rowsPerStep: (after.decodeRows - before.decodeRows) / Math.max(1, after.decodeSteps - before.decodeSteps),
  };
}

export const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
