// Maps any error a route throws to a status and a JSON body, the one table the app's onError uses:
// ApiErrors carry their own status, StoreErrors map by code, Hono's HTTPExceptions keep theirs, and
// a store that cannot be reached is a 503, and anything else is a 500 whose body says nothing about
// internals (no SQL, no stack, no secrets). Each answer says whether repeating the request can help.
import { HTTPException } from 'hono/http-exception';
import { StoreError, storeErrorStatus } from '../../db/errors.ts';
import { isStoreUnreachable } from '../../db/store-unreachable.ts';
import { ApiError, type ApiErrorCode, apiErrorCodes } from './api-error.ts';

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
 * 409, such as a history conflict, which fails the same way every time).
 */
export function mayRetry(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export function errorResponse(error: unknown): ErrorResponse {
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
