// Maps any error a route throws to a status and a JSON body, the one table the app's onError uses:
// ApiErrors carry their own status, StoreErrors map by code, Hono's HTTPExceptions keep theirs, and
// anything else is a 500 whose body says nothing about internals (no SQL, no stack, no secrets).
import { HTTPException } from 'hono/http-exception';
import { StoreError, type StoreErrorCode } from '../../db/errors.ts';
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

/** How each store failure reads to an API client. `query-*` only arise inside episodes. */
const storeCodes = {
  validation: 'invalid-request',
  'not-found': 'not-found',
  conflict: 'conflict',
  'history-mismatch': 'conflict',
  'trajectory-closed': 'conflict',
  'lease-lost': 'conflict',
  'policy-lease-lost': 'conflict',
  'not-migrated': 'unavailable',
} as const satisfies Record<StoreErrorCode, ApiErrorCode>;

export function errorResponse(error: unknown): ErrorResponse {
  if (error instanceof ApiError) {
    const body = { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) };
    return { status: error.status, body: { error: body }, log: error.status >= 500 };
  }
  if (error instanceof StoreError) {
    const code = storeCodes[error.code];
    const field = error.issues[0]?.path.join('.');
    const body = { code, message: error.message, ...(field ? { field } : {}) };
    return { status: apiErrorCodes[code], body: { error: body }, log: apiErrorCodes[code] >= 500 };
  }
  if (error instanceof HTTPException) {
    const code = codeForStatus(error.status);
    return {
      status: error.status,
      body: { error: { code, message: error.message || code } },
      log: error.status >= 500,
    };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } }, log: true };
}

function codeForStatus(status: number): ApiErrorCode {
  const match = Object.entries(apiErrorCodes).find(([, value]) => value === status);
  return match ? (match[0] as ApiErrorCode) : status >= 500 ? 'internal' : 'invalid-request';
}
