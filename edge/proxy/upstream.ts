// The inference endpoint the proxy forwards to (and the episode loop asks): any OpenAI-compatible
// chat completions API. One call: the response status, its JSON (or text) and the latency.
import { chatCompletionsUrl } from '../../protocol/openai/chat-completions-url.ts';
import { startDeadline } from '../../protocol/deadline.ts';
import { errorMessageWithCause } from '../../protocol/error-message.ts';
import { readCapped } from '../../protocol/read-capped.ts';
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
  /**
   * Bytes of one reply the proxy records (content + tool-call arguments; EPISODE_MAX_REPLY_BYTES);
   * a response body is read up to `replyBodyBytes` of it. Absent: episodeBoundDefaults' 1 MiB.
   */
  readonly maxReplyBytes?: number;
}

/** The default reply bound, as the episode loop's (episode-defaults.ts): 1 MiB. */
const defaultMaxReplyBytes = 1024 * 1024;

/**
 * A body holds more than the reply's text: per-token logprob entries (~60 bytes of JSON a token in
 * vLLM's `logprobs.content`), token ids, and in a stream one event per token. 32 body bytes per reply
 * byte (as the policy client's, openai-policy-client.ts) is room for those at the reply bound.
 */
export function replyLimits(endpoint: Pick<UpstreamEndpoint, 'maxReplyBytes'>): {
  maxReplyBytes: number;
  maxBodyBytes: number;
} {
  const maxReplyBytes = endpoint.maxReplyBytes ?? defaultMaxReplyBytes;
  return { maxReplyBytes, maxBodyBytes: maxReplyBytes * 32 };
}

export interface UpstreamReply {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** Set when the body passed the read cap: it was cancelled there and `text` is empty. */
  readonly overflow?: { readonly bytesRead: number; readonly maxBytes: number };
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
    // Read with a cap, never whole: a hostile or runaway endpoint's 50 MB body is cancelled at the cap.
    const read = await readCapped(response.body, replyLimits(endpoint).maxBodyBytes);
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? 'application/json',
      text: read.ok ? new TextDecoder().decode(read.bytes) : '',
      ...(read.ok ? {} : { overflow: { bytesRead: read.bytesRead, maxBytes: read.maxBytes } }),
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
