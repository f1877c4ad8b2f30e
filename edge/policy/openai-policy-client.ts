// A PolicyClient for any OpenAI-compatible chat completions endpoint: vLLM, edgerl's own
// `serve-model`, or OpenAI itself. fetch only (no Node imports), so it runs in workerd too.
// Non-streaming: the loop needs whole turns; token streaming to clients is not its job.
import type { ToolSpec } from '../../protocol/chat.ts';
import type { PolicyClient, PolicyRequest, PolicyResponse } from './policy-client.ts';
import { chatCompletionsUrl } from '../../protocol/openai/chat-completions-url.ts';
import { errorMessageWithCause } from '../../protocol/error-message.ts';
import { parseRetryAfter } from '../../protocol/openai/retry-after.ts';
import { readCapped } from '../../protocol/read-capped.ts';
import { PolicyError } from './policy-error.ts';
import { toPolicyResponse } from './to-policy-response.ts';

export interface OpenAIPolicyClientOptions {
  /** The API root, e.g. `http://127.0.0.1:8000/v1`; `/chat/completions` is appended. */
  readonly baseUrl: string;
  /** Sent as a bearer token when given; local servers usually need none. */
  readonly apiKey?: string;
  /**
   * Ask for the exact token ids (`return_token_ids`, vLLM >= 0.10.2 and edgerl's endpoint). Turn it
   * off for endpoints that reject unknown fields (OpenAI); turns are then stored as not token-exact.
   */
  readonly requestTokenIds?: boolean;
  /** `max_completion_tokens` (OpenAI's current name, accepted by vLLM) or the older `max_tokens`. */
  readonly maxTokensField?: 'max_completion_tokens' | 'max_tokens';
  readonly headers?: Readonly<Record<string, string>>;
  /** Injected for tests and for runtimes that wrap fetch; defaults to the global one. */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** Largest response body read, in bytes; past it the body is cancelled and the call fails. */
  readonly maxResponseBytes?: number;
}

/**
 * A body carries far more than the reply's text: per-token logprob entries (~60 bytes of JSON per
 * token in vLLM's `logprobs.content`) and token ids. 32 bytes of body per byte of reply leaves room for
 * those on a reply at the episode's maxReplyBytes bound, whose check then names the reply's real size.
 */
export const responseBytesPerReplyByte = 32;

/** 32 MiB: 32 × the episode loop's 1 MiB reply bound (episode-defaults.ts). */
export const defaultMaxResponseBytes = 32 * 1024 * 1024;

/** Error bodies are quoted in the reason; a whole HTML error page is not useful there. */
const maxErrorBodyChars = 300;

export class OpenAIPolicyClient implements PolicyClient {
  readonly #url: string;
  readonly #options: OpenAIPolicyClientOptions;

  constructor(options: OpenAIPolicyClientOptions) {
    const base = parseUrl(options.baseUrl);
    if (base?.protocol !== 'http:' && base?.protocol !== 'https:') {
      throw new Error(
        `baseUrl must be an absolute http(s) URL such as http://127.0.0.1:8000/v1, got "${options.baseUrl}"`,
      );
    }
    this.#url = chatCompletionsUrl(base.href);
    this.#options = options;
  }

  async complete(request: PolicyRequest): Promise<PolicyResponse> {
    const options = this.#options;
    const fetchImpl = options.fetch ?? fetch;
    const now = options.now ?? (() => performance.now());
    const body = {
      model: request.model,
      messages: request.messages,
      ...(request.tools.length > 0
        ? { tools: request.strictTools ? request.tools.map(strict) : request.tools }
        : {}),
      // Only "required" is sent: a request without tool_choice means "auto" with tools, and stays the
      // same bytes for endpoints that know no tool_choice.
      ...(request.tools.length > 0 && request.toolChoice === 'required' ? { tool_choice: 'required' } : {}),
      // The wire boundary: the only place sampling settings take OpenAI's field names.
      temperature: request.temperature,
      [options.maxTokensField ?? 'max_completion_tokens']: request.maxTokens,
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      logprobs: true,
      ...((options.requestTokenIds ?? true) ? { return_token_ids: true } : {}),
      stream: false,
    };
    const started = now();
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(this.#url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          ...options.headers,
        },
        body: JSON.stringify(body),
        signal: request.signal,
      });
      const maxBytes = options.maxResponseBytes ?? defaultMaxResponseBytes;
      const read = await readCapped(response.body, maxBytes);
      if (!read.ok) {
        // Not retryable: the same request would bring the same flood back.
        throw new PolicyError(
          'invalid-response',
          `reply-too-large: the response from ${this.#url} passed ${maxBytes} bytes; not read further`,
        );
      }
      text = new TextDecoder().decode(read.bytes);
    } catch (error) {
      if (error instanceof PolicyError) throw error;
      throw this.#transportError(error, request.signal);
    }
    const latencyMs = Math.max(0, now() - started);
    if (!response.ok) {
      const snippet = text.length > maxErrorBodyChars ? `${text.slice(0, maxErrorBodyChars)}…` : text;
      const retryAfterMs = parseRetryAfter(response.headers, Date.now());
      throw new PolicyError('http', `HTTP ${response.status} from ${this.#url}: ${snippet.trim()}`, {
        status: response.status,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new PolicyError('invalid-response', `response from ${this.#url} is not JSON`, { cause: error });
    }
    return toPolicyResponse(json, { model: request.model, latencyMs });
  }

  #transportError(error: unknown, signal: AbortSignal): PolicyError {
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      const timedOut =
        typeof reason === 'object' && reason !== null && 'name' in reason && reason.name === 'TimeoutError';
      return timedOut
        ? new PolicyError('timeout', `no answer from ${this.#url} in time`, { cause: error })
        : new PolicyError('cancelled', 'the request was cancelled', { cause: error });
    }
    return new PolicyError('network', `cannot reach ${this.#url}: ${errorMessageWithCause(error)}`, {
      cause: error,
    });
  }
}

/** A tool spec with OpenAI's `strict` flag, which only the wire carries (protocol's ToolSpec has none). */
const strict = (tool: ToolSpec) => ({ ...tool, function: { ...tool.function, strict: true } });

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
