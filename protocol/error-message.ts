// The one-line text of anything thrown, for reasons, observations and logs: the one helper every package
// uses instead of casting (`(error as Error).message` breaks on a thrown string).

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The message, then its cause when that adds something: `fetch failed (connect ECONNREFUSED …)`. fetch's own
 * message is often only "fetch failed"; the cause says why. For one-line reports and failure reasons.
 */
export function errorMessageWithCause(error: unknown): string {
  const message = errorMessage(error);
  const cause: unknown = error instanceof Error ? error.cause : undefined;
  const detail =
    cause instanceof Error
      ? cause.message
      : typeof cause === 'object' && cause !== null && 'code' in cause
        ? String(cause.code)
        : '';
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}
