// What every route of the endpoint needs, built once by the entry point: the engine (the only way to
// the model), the tokenizer, and what /v1/models reports. Plus the two helpers the routes share.
import type { Context } from 'hono';
import type { ChatTokenizer } from '../model/tokenizer/index.ts';
import type { GuessLimiter } from '../protocol/guess-limiter.ts';
import type { ServeEngine } from './engine.ts';
import { ServeError } from './serve-error.ts';
import { errorMessage } from '../protocol/error-message.ts';

export interface ServeContext {
  readonly engine: ServeEngine;
  readonly tokenizer: ChatTokenizer;
  /** The model's vocabulary size (may exceed the tokenizer's: padding rows). */
  readonly vocabSize: number;
  /** Longest prompt + output served. */
  readonly maxModelLen: number;
  /** The base model's name (`model` in requests, `id` in /v1/models). */
  readonly baseName: string;
  /** Where the base model was loaded from (`root` in /v1/models). */
  readonly basePath: string;
  /** Unix seconds when the server started. */
  readonly created: number;
  /** Clients must send `Authorization: Bearer <apiKey>` on /v1 routes when set. */
  readonly apiKey?: string;
  /** Counts wrong API keys per client (429 once over); default one of this app's own, logging to stderr. */
  readonly limiter?: GuessLimiter;
  /** Largest request body in bytes (serve-config.ts `maxBodyBytes`); larger ones get 413. */
  readonly maxBodyBytes: number;
}

export async function readJsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ServeError('bad-request', `request body is not valid JSON: ${errorMessage(cause)}`, null, {
      cause,
    });
  }
}

/** OpenAI-style ids: a prefix and 32 hex digits. */
export function requestId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().replaceAll('-', '')}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
