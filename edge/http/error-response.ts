// Maps any error a route throws to a status and a JSON body, the one table the app's onError uses:
// ApiErrors carry their own status, StoreErrors map by code, Hono's HTTPExceptions keep theirs, and
// a store that cannot be reached is a 503, and anything else is a 500 whose body says nothing about
// internals (no SQL, no stack, no secrets). Each answer says whether repeating the request can help,
// and on the OpenAI-compatible routes a refusal that will not change gets a status no SDK retries.
import { HTTPException } from 'hono/http-exception';
import { StoreError, storeErrorStatus } from '../../db/errors.ts';
import { isStoreUnreachable } from '../../db/store-unreachable.ts';
import { ApiError, type ApiErrorCode, apiErrorCodes } from './api-error.ts';
import type { ErrorSurface } from './error-surface.ts';

export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly field?: string;
  };
}

export interface ErrorResponse {
  readonly status: number;
  readonly body: ErrorBody;
  /** True for failures the operator should see in logs (5xx). */
  readonly log: boolean;
}

/**
 * Whether the same request may succeed later: timeouts, rate limits and server-side failures. Sent as
 * `x-should-retry`, which openai-node reads before its own status rules (it would otherwise retry a
 * 409, such as a history conflict, which fails the same way every time); SDKs that go by status alone
 * are kept from retrying by statusOn.
 */
export function mayRetry(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The status a refusal is answered with on `surface`. SDKs retry some 4xx by status alone, whatever
 * `x-should-retry` says: the AI SDK retries 408, 409, 429 and 5xx (@ai-sdk/provider's APICallError
 * `isRetryable`, 2 retries by default), openai-node 408, 409, 429 and 5xx unless told not to, and
 * LangChain's AsyncCaller everything but 400–407, 409 and 413 (6 retries; @langchain/core
 * utils/async_caller.ts STATUS_NO_RETRY, so a 422 would be retried). A 409 here (a history conflict,
 * a closed trajectory, another writer's trajectory) fails the same way every time, so on the
 * OpenAI-compatible routes it is a 400 with the same `code`: the one status all three treat as final.
 * edgerl's own API keeps 409, which its clients read by code.
 */
export function statusOn(surface: ErrorSurface, status: number): number {
  return surface === 'openai' && status === 409 ? 400 : status;
}

export function errorResponse(error: unknown, surface: ErrorSurface = 'edge'): ErrorResponse {
  const response = responseFor(error);
  const status = statusOn(surface, response.status);
  return status === response.status ? response : { ...response, status };
}

function responseFor(error: unknown): ErrorResponse {
  if (error instanceof ApiError) {
    const body = { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) };
    return { status: error.status, body: { error: body }, log: error.status >= 500 };
  }
  if (error instanceof StoreError) {
    // The API's code for the store's status: 400 invalid-request, 404, 409 conflict, 503 unavailable.
    const status = storeErrorStatus[error.code];
    // A store code the API names too (the writer refusals) keeps its name; the rest go by status.
    const code = Object.hasOwn(apiErrorCodes, error.code)
      ? (error.code as ApiErrorCode)
      : codeForStatus(status);
    const field = error.issues[0]?.path.join('.');
    const body = { code, message: error.message, ...(field ? { field } : {}) };
    return { status, body: { error: body }, log: status >= 500 };
  }
  if (error instanceof HTTPException) {
    const code = codeForStatus(error.status);
    return {
      status: error.status,
      body: { error: { code, message: error.message || code } },
      log: error.status >= 500,
    };
  }
  if (isStoreUnreachable(error)) {
    // Expected while the database restarts or a network blips: the client retries (after a while).
    const message = 'the store cannot be reached right now; retry later';
    return { status: 503, body: { error: { code: 'unavailable', message } }, log: true };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } }, log: true };
}

function codeForStatus(status: number): ApiErrorCode {
  const match = Object.entries(apiErrorCodes).find(([, value]) => value === status);
  return match ? (match[0] as ApiErrorCode) : status >= 500 ? 'internal' : 'invalid-request';
}
