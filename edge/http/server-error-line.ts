// What the edge logs for a request that failed with a 5xx (app.ts onError → logError): an expected,
// typed failure (an ApiError or StoreError the code threw on purpose: store unavailable, no replica
// holds the model) or a store that cannot be reached is one line, its code, message and cause;
// anything else is a bug and keeps its
// stack. Credentials are masked either way (a driver's message may quote a connection string).
import { StoreError } from '../../db/errors.ts';
import { isStoreUnreachable } from '../../db/store-unreachable.ts';
import { errorMessageWithCause } from '../../protocol/error-message.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import { ApiError } from './api-error.ts';

export function serverErrorLine(error: unknown): string {
  if (error instanceof ApiError || error instanceof StoreError) {
    const line = `${error.code}: ${errorMessageWithCause(error)}`.replace(/\s*\n\s*/g, ' ');
    return redactSecrets(line);
  }
  if (isStoreUnreachable(error)) {
    return redactSecrets(`unavailable: ${errorMessageWithCause(error)}`.replace(/\s*\n\s*/g, ' '));
  }
  return redactSecrets(error instanceof Error ? (error.stack ?? error.message) : String(error));
}
