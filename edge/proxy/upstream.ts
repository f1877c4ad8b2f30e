// The inference endpoint the proxy forwards to (and the episode loop asks): any OpenAI-compatible
// chat completions API. One call: the response status, its JSON (or text) and the latency.
import { chatCompletionsUrl } from '../../protocol/openai/chat-completions-url.ts';
import { startDeadline } from '../../protocol/deadline.ts';
import { errorMessageWithCause } from '../../protocol/error-message.ts';
import { ApiError } from '../http/api-error.ts';
import type { FleetFetch } from '../routing/fleet-fetch.ts';

export interface UpstreamEndpoint {
  /** The API root up to `/v1`, e.g. `http://127.0.0.1:8000/v1`. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** Ask for vLLM's `return_token_ids` (off for endpoints that reject unknown fields, like OpenAI). */
  readonly requestTokenIds: boolean;
  /** One call's limit in milliseconds. */
  readonly timeoutMs: number;
  readonly fetch?: typeof fetch;
  /** Over an inference fleet: sends to a replica that holds the body's model (edge/routing/fleet-fetch.ts). */
  readonly fleet?: FleetFetch;
}

export interface UpstreamReply {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  readonly latencyMs: number;
  /** Over a fleet: the replica that answered. */
  readonly replica?: string;
}

export async function callUpstream(
  endpoint: UpstreamEndpoint,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<UpstreamReply> {
  const url = chatCompletionsUrl(endpoint.baseUrl);
  const deadline = startDeadline(endpoint.timeoutMs, signal);
  const started = performance.now();
  try {
    const { response, replica } = await send(endpoint, url, body, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: deadline.signal,
    });
    const text = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? 'application/json',
      text,
      latencyMs: performance.now() - started,
      ...(replica ? { replica } : {}),
    };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const reason = deadline.timedOut
      ? `no answer within ${endpoint.timeoutMs} ms`
      : errorMessageWithCause(error);
    throw new ApiError('bad-gateway', `inference endpoint ${url}: ${reason}`, { cause: error });
  } finally {
    deadline.clear();
  }
}

/** An opened stream and its deadline, which the reader clears once it has read the body. */
export interface OpenedUpstream {
  readonly response: Response;
  readonly release: () => void;
  /** Over a fleet: the replica that answered. */
  readonly replica?: string;
}

/** Opens a call whose body is read by the caller (a stream); the timeout covers the whole stream. */
export async function openUpstream(
  endpoint: UpstreamEndpoint,
  body: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<OpenedUpstream> {
  const url = chatCompletionsUrl(endpoint.baseUrl);
  const deadline = startDeadline(endpoint.timeoutMs, signal);
  try {
    const { response, replica } = await send(endpoint, url, body, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: deadline.signal,
    });
    return { response, release: deadline.clear, ...(replica ? { replica } : {}) };
  } catch (error) {
    deadline.clear();
    if (error instanceof ApiError) throw error;
    const reason = deadline.timedOut
      ? `no answer within ${endpoint.timeoutMs} ms`
      : errorMessageWithCause(error);
    throw new ApiError('bad-gateway', `inference endpoint ${url}: ${reason}`, { cause: error });
  }
}

/** One endpoint's fetch, or the fleet's (which picks the replica by the body's model). */
function send(
  endpoint: UpstreamEndpoint,
  url: string,
  body: Record<string, unknown>,
  init: RequestInit,
): Promise<{ response: Response; replica?: string }> {
  if (endpoint.fleet) return endpoint.fleet(String(body.model), init);
  return (endpoint.fetch ?? fetch)(url, init).then((response) => ({ response }));
}
