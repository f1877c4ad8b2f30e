// The one error type a policy client throws, with the kind that decides whether a retry can help.

export const policyErrorKinds = ['network', 'timeout', 'http', 'invalid-response', 'cancelled'] as const;
export type PolicyErrorKind = (typeof policyErrorKinds)[number];

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  readonly kind: PolicyErrorKind;
  /** HTTP status, for kind `http`. */
  readonly status?: number;
  /** From a `Retry-After` header, when the endpoint sent one. */
  readonly retryAfterMs?: number;

  constructor(
    kind: PolicyErrorKind,
    message: string,
    options: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Transient failures only: the network, our own timeout, 408/429 and 5xx. A 4xx means the request
 * itself is wrong and would fail again; a cancelled episode must not be retried.
 */
export function isRetryablePolicyError(error: unknown): boolean {
  if (!(error instanceof PolicyError)) return false;
  switch (error.kind) {
    case 'network':
    case 'timeout':
      return true;
    case 'http':
      return (
        error.status === 408 || error.status === 429 || (error.status !== undefined && error.status >= 500)
      );
    case 'invalid-response':
    case 'cancelled':
      return false;
  }
}
