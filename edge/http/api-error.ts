// The edge's own typed error: a stable `code`, the HTTP status it maps to, and, for bad input, the
// field at fault. Thrown by routes and middleware; turned into JSON in exactly one place (app.ts).

// Several codes may share a status; the generic one comes first, as error-response.ts maps a status
// to the first code listed with it.
export const apiErrorCodes = {
  /** The body or a parameter is invalid; `field` names it. */
  'invalid-request': 400,
  /** No bearer token, or not one of the configured keys. */
  unauthorized: 401,
  /** A valid key without the scope the route needs (protocol/api-scope.ts); the message names the scope. */
  forbidden: 403,
  /** A client trajectory's key is missing or wrong (docs/edge.md, "Who writes a trajectory"). */
  'trajectory-key': 403,
  'not-found': 404,
  /** The request contradicts what is stored (a finished trajectory, a rewritten history, …). */
  conflict: 409,
  /**
   * The trajectory is another writer's: a rollout runner's, or an uploaded one (docs/edge.md, "Who
   * writes a trajectory"); open your own with POST /v1/trajectories.
   */
  'trajectory-owned': 409,
  'payload-too-large': 413,
  /** Too many wrong keys from this client (protocol/guess-limiter.ts); Retry-After says when to retry. */
  'too-many-requests': 429,
  /**
   * The edge's episode queue or the policy's episodes in flight are at their bound (rollouts/admit-episodes.ts);
   * Retry-After estimates when there will be room.
   */
  'backlog-full': 429,
  /** The upstream inference endpoint could not be reached or answered nonsense. */
  'bad-gateway': 502,
  /** The edge is up but misconfigured or its database is not ready. */
  unavailable: 503,
  internal: 500,
} as const satisfies Record<string, number>;
export type ApiErrorCode = keyof typeof apiErrorCodes;

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  /** Dotted path of the offending field (`groupSize`, `messages.2.role`), for `invalid-request`. */
  readonly field?: string;

  constructor(code: ApiErrorCode, message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.field !== undefined) this.field = options.field;
  }

  get status(): number {
    return apiErrorCodes[this.code];
  }
}

/** A 400 that names the field. */
export function invalidField(field: string, message: string): ApiError {
  return new ApiError('invalid-request', `${field}: ${message}`, { field });
}
