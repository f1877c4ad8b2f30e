// HTTP client for an OpenAI-compatible judge: one POST to `${baseUrl}/chat/completions` per call. It
// asks for the strongest answer format the endpoint accepts and steps down (json_schema → json_object
// → plain text) when a 400/422 says the format is unsupported, remembering what worked. Failures come
// back as data with a `retryable` flag; retrying itself is judge-with-retries.ts's job. Uses only
// fetch and AbortSignal, so it runs in Cloudflare Workers as well as Node.
import type { ChatMessage } from '../../protocol/chat.ts';
import { completionUsageSchema, parseChatCompletion } from '../../protocol/openai/chat-completion.ts';
import { chatCompletionsUrl } from '../../protocol/openai/chat-completions-url.ts';
import { startDeadline } from '../../protocol/deadline.ts';
import { errorMessageWithCause } from '../../protocol/error-message.ts';
import { parseRetryAfter } from '../../protocol/openai/retry-after.ts';
import { isRetryableStatus } from '../../protocol/openai/retryable-status.ts';
import { judgeResponseFormat, type ResponseMode, weakerMode } from './judge-response-format.ts';

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export const judgeCallFailureKinds = [
  'timeout',
  'network',
  'http',
  'bad-response',
  'no-choices',
  'refusal',
  'aborted',
] as const;
export type JudgeCallFailureKind = (typeof judgeCallFailureKinds)[number];

export interface JudgeCallFailure {
  readonly kind: JudgeCallFailureKind;
  readonly message: string;
  /**
   * Worth another attempt: timeouts, network errors, the statuses of the shared rule
   * (protocol/openai/retryable-status.ts), empty, malformed or refused answers.
   */
  readonly retryable: boolean;
  readonly status?: number;
  /** From a `retry-after-ms` or `Retry-After` header (protocol/openai/retry-after.ts). */
  readonly retryAfterMs?: number;
  readonly usage?: TokenUsage;
}

export type JudgeCallOutcome =
  | {
      readonly kind: 'answer';
      readonly content: string;
      /** Absent when the endpoint did not report usage. */
      readonly usage?: TokenUsage;
      readonly mode: ResponseMode;
      readonly finishReason?: string;
    }
  | { readonly kind: 'failure'; readonly failure: JudgeCallFailure };

export interface JudgeClientOptions {
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
  readonly temperature?: number;
  /** Start from this mode, e.g. one an earlier run found to work (default json_schema). */
  readonly initialMode?: ResponseMode;
  readonly fetch?: typeof fetch;
  /** Wall-clock epoch milliseconds, for a Retry-After given as a date; Date.now by default. */
  readonly now?: () => number;
}

export interface JudgeClient {
  readonly model: string;
  /** The answer format this endpoint accepted last (or will be tried first). */
  readonly mode: ResponseMode;
  complete(
    messages: readonly ChatMessage[],
    labels: readonly string[],
    signal?: AbortSignal,
  ): Promise<JudgeCallOutcome>;
}

export function createJudgeClient(options: JudgeClientOptions): JudgeClient {
  const url = chatCompletionsUrl(options.baseUrl);
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  let mode: ResponseMode = options.initialMode ?? 'json_schema';

  async function post(body: object, signal?: AbortSignal): Promise<HttpReply | JudgeCallFailure> {
    const deadline = startDeadline(options.timeoutMs, signal);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: deadline.signal,
      });
      // Read the body under the same deadline: a server can stall after the headers.
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      if (deadline.timedOut) {
        return { kind: 'timeout', retryable: true, message: `no answer within ${options.timeoutMs} ms` };
      }
      if (signal?.aborted) return { kind: 'aborted', retryable: false, message: 'aborted by the caller' };
      const message = `request to ${url} failed: ${errorMessageWithCause(error)}`;
      return { kind: 'network', retryable: true, message };
    } finally {
      deadline.clear();
    }
  }

  return {
    model: options.model,
    get mode() {
      return mode;
    },
    async complete(messages, labels, signal) {
      for (;;) {
        const format = judgeResponseFormat(mode, labels);
        const body = {
          model: options.model,
          messages,
          ...(format ? { response_format: format } : {}),
          ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        };
        const reply = await post(body, signal);
        if ('kind' in reply) return { kind: 'failure', failure: reply };
        if (reply.status < 200 || reply.status > 299) {
          const weaker = weakerMode(mode);
          if ((reply.status === 400 || reply.status === 422) && weaker && formatRejected(reply.text)) {
            mode = weaker;
            continue;
          }
          return { kind: 'failure', failure: httpFailure(reply, (options.now ?? Date.now)()) };
        }
        return readCompletion(reply.text, mode);
      }
    },
  };
}

/** A 400/422 whose message is about the response format (OpenAI, vLLM, Ollama, LiteLLM wordings). */
function formatRejected(body: string): boolean {
  return /response_format|json_schema|json_object|structured output|guided|grammar/i.test(body);
}

interface HttpReply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

function httpFailure(reply: HttpReply, nowMs: number): JudgeCallFailure {
  const status = reply.status;
  const retryAfterMs = parseRetryAfter(reply.headers, nowMs);
  return {
    kind: 'http',
    status,
    retryable: isRetryableStatus(status),
    message: `HTTP ${status}: ${errorMessage(reply.text)}`,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
}

function readCompletion(text: string, mode: ResponseMode): JudgeCallOutcome {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return failure('bad-response', `the endpoint answered 200 with a body that is not JSON: ${clip(text)}`);
  }
  const parsed = parseChatCompletion(json);
  if (!parsed.ok) {
    // The tokens may be billed even when the answer cannot be read: keep the usage if it can be.
    const usage = readUsage(asRecord(json)?.usage);
    return parsed.noChoice
      ? failure('no-choices', 'the completion has no choices[0].message', usage)
      : failure('bad-response', parsed.message, usage);
  }
  const { message, finish_reason: finishReason } = parsed.choice;
  const usage = readUsage(parsed.completion.usage);
  if (message.refusal) return failure('refusal', `the judge refused: ${clip(message.refusal)}`, usage);
  return {
    kind: 'answer',
    content: message.content ?? '',
    mode,
    ...(usage ? { usage } : {}),
    ...(finishReason ? { finishReason } : {}),
  };
}

function failure(kind: JudgeCallFailureKind, message: string, usage?: TokenUsage): JudgeCallOutcome {
  return { kind: 'failure', failure: { kind, message, retryable: true, ...(usage ? { usage } : {}) } };
}

/** Both counts or nothing: a tally with half the usage would look exact and be wrong. */
function readUsage(value: unknown): TokenUsage | undefined {
  const usage = completionUsageSchema.safeParse(value);
  const prompt = usage.success ? usage.data.prompt_tokens : undefined;
  const completion = usage.success ? usage.data.completion_tokens : undefined;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return undefined;
  return { promptTokens: prompt, completionTokens: completion };
}

function errorMessage(body: string): string {
  try {
    const error = asRecord(JSON.parse(body))?.error;
    if (typeof error === 'string') return clip(error); // Ollama's shape
    const message = asRecord(error)?.message;
    if (typeof message === 'string') return clip(message);
  } catch {
    // not JSON: show the text itself
  }
  return clip(body);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}
