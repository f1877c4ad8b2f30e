// The console's own request error (a malformed query the page or script sent), and the one place
// errors become responses: store errors by their code, everything else a 500 whose cause is logged
// and never shown (it may hold SQL).
import { isStoreError, storeErrorStatus } from '../db/errors.ts';

export class ConsoleRequestError extends Error {
  override readonly name = 'ConsoleRequestError';
  readonly code = 'bad-request';
}

export interface ErrorOutcome {
  readonly status: 400 | 403 | 404 | 409 | 500 | 503;
  readonly code: string;
  readonly message: string;
  /** Whether the server log should have it (unexpected errors). */
  readonly log: boolean;
}

export function errorOutcome(error: unknown): ErrorOutcome {
  if (error instanceof ConsoleRequestError)
    return { status: 400, code: error.code, message: error.message, log: false };
  if (isStoreError(error)) {
    const status = storeErrorStatus[error.code];
    return { status, code: error.code, message: error.message, log: status >= 500 };
  }
  return {
    status: 500,
    code: 'internal',
    message: 'the console could not answer this request (see the server log)',
    log: true,
  };
}
