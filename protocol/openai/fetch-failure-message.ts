// The text of a failed fetch, for reasons and logs. fetch's own message is often only "fetch failed";
// its cause says why (ECONNREFUSED, a DNS error, …). Timeouts and cancellations are the caller's to tell.
import { errorMessage } from '../error-message.ts';

/** `fetch failed (connect ECONNREFUSED 127.0.0.1:8000)`: the message, then the cause when it adds one. */
export function fetchFailureMessage(error: unknown): string {
  const message = errorMessage(error);
  const cause: unknown = error instanceof Error ? error.cause : undefined;
  const detail =
    cause instanceof Error
      ? cause.message
      : typeof cause === 'object' && cause !== null && 'code' in cause
        ? String(cause.code)
        : '';
  return detail && detail !== message ? `${message} (${detail})` : message;
}
