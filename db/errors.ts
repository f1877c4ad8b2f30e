// The store's typed errors: a stable `code` callers branch on (`storeErrorStatus` maps codes to HTTP
// statuses for the edge's and the console's error responses), a message that names what is wrong, and the original error kept as `cause`.
import type { z } from 'zod';

export const storeErrorCodes = [
  /** The input failed validation; `issues` names each offending field. */
  'validation',
  /** A referenced row (trajectory, group, task, version, …) does not exist. */
  'not-found',
  /** The write contradicts what is stored: a different turn at the same index, a duplicate name, a bad state change. */
  'conflict',
  /** A conversation's history differs from the turns the trajectory holds (rewritten, or a stale view of it). */
  'history-mismatch',
  /** The trajectory has finished; it takes no more turns. */
  'trajectory-closed',
  /** The caller no longer holds its lease on a group or an episode (it expired and another trainer or runner took it). */
  'lease-lost',
  /**
   * The trajectory is another writer's (docs/edge.md, "Who writes a trajectory"): a rollout runner's, or
   * stored whole by an upload; nobody else appends to it or finishes it.
   */
  'trajectory-owned',
  /** A client trajectory written without its trajectory key, or with another key. */
  'trajectory-key',
  /** The caller does not hold the policy's lease (another trainer advances the policy): nothing is published. */
  'policy-lease-lost',
  /** The database lacks migrations this code needs; run `edgerl db migrate`. */
  'not-migrated',
] as const;
export type StoreErrorCode = (typeof storeErrorCodes)[number];

/**
 * What each store failure means to an HTTP client, the one table both HTTP faces read (the edge's
 * onError and the console's): bad input, a missing row, a contradiction of what is stored, or a
 * database that is not ready.
 */
export const storeErrorStatus = {
  validation: 400,
  'not-found': 404,
  conflict: 409,
  'history-mismatch': 409,
  'trajectory-closed': 409,
  'lease-lost': 409,
  'trajectory-owned': 409,
  'trajectory-key': 403,
  'policy-lease-lost': 409,
  'not-migrated': 503,
} as const satisfies Record<StoreErrorCode, 400 | 403 | 404 | 409 | 503>;

export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: StoreErrorCode;
  /** For `validation`: the zod issues, each with the path of the offending field. */
  readonly issues: readonly z.core.$ZodIssue[];

  constructor(
    code: StoreErrorCode,
    message: string,
    options: { cause?: unknown; issues?: readonly z.core.$ZodIssue[] } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.issues = options.issues ?? [];
  }
}

export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}
