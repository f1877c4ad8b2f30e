// The one error type a policy client throws, with a stable code that decides whether a retry can help.
import { isRetryableStatus } from '../../protocol/openai/retryable-status.ts';

export const policyErrorCodes = ['network', 'timeout', 'http', 'invalid-response', 'cancelled'] as const;
export type PolicyErrorCode = (typeof policyErrorCodes)[number];

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  readonly code: PolicyErrorCode;
  /** HTTP status, for code `http`. */
  readonly status?: number;
  /** From the response's `retry-after-ms` or `Retry-After` header, when the endpoint sent one. */
  readonly retryAfterMs?: number;

  constructor(
    code: PolicyErrorCode,
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Transient failures only: the network, our own timeout, and the statuses of the shared rule
 * (protocol/openai/retryable-status.ts). A malformed answer would come back the same; a cancelled
 * episode must not be retried.
 */
export function isRetryablePolicyError(error: unknown): boolean {
  if (!(error instanceof PolicyError)) return false;
  switch (error.code) {
    case 'network':
    case 'timeout':
      return true;
    case 'http':
      return error.status !== undefined && isRetryableStatus(error.status);
    case 'invalid-response':
    case 'cancelled':
      return false;
  }
}
