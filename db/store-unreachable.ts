// Whether a store call failed because the database could not be reached (a refused or cut connection,
// a server shutting down or not yet accepting connections), as opposed to the call itself being wrong.
// Long-running callers (the continuous trainer) wait the former out and report the latter. Leaves out
// deciding how long to wait (trainer/train/wait-out-store.ts).
import { StoreError } from './errors.ts';

/** A wrapper or two (drizzle's DrizzleQueryError, an Error with `cause`) is usual; deeper is not. */
const maxCauseDepth = 5;

/** Node's socket errors for a peer that is down, unreachable, or went away (nodejs.org/api/errors.html). */
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that cannot serve now (PostgreSQL manual, Appendix A): class 08 connection
 * exception; 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up or in
 * recovery); 53300 too_many_connections.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code);
}

/** node-postgres's own messages for a connection lost or never made (pg's client.js, pg-pool). */
const lostConnectionMessages = [
  /connection terminated/i,
  /not queryable/i,
  /connection timeout/i,
  /timeout exceeded when trying to connect/i,
  /server closed the connection unexpectedly/i,
];

export function isStoreUnreachable(error: unknown): boolean {
  return unreachableCause(error) !== undefined;
}

/**
 * The error along the cause chain that says the store is unreachable (`connect ECONNREFUSED …`,
 * `Connection terminated unexpectedly`), for a one-line reason: drizzle's wrapper quotes the SQL and
 * its parameters over several lines; undefined when the store answered.
 */
export function unreachableCause(error: unknown): Error | undefined {
  let current: unknown = error;
  for (let depth = 0; depth <= maxCauseDepth && current instanceof Error; depth += 1) {
    // The store's own typed refusals (a conflict, a lost lease) come from a database that answered.
    if (current instanceof StoreError) return undefined;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (socketCodes.has(code)) return current;
      if (/^[0-9A-Z]{5}$/.test(code)) return isUnavailableSqlState(code) ? current : undefined;
    }
    // Node's `fetch failed` and AggregateError (happy eyeballs over several addresses) wrap the socket errors.
    if (current instanceof AggregateError) {
      const inner = current.errors.map(unreachableCause).find((cause) => cause !== undefined);
      if (inner) return inner;
    }
    const message = current.message;
    if (lostConnectionMessages.some((pattern) => pattern.test(message))) return current;
    current = current.cause;
  }
  return undefined;
}
