// The sandbox's typed errors, read by the SQL tool by duck typing (protocol/read-only-sql.ts):
// SandboxError `query-refused` for a statement refused before or instead of running;
// `sandbox-unavailable` for the sandbox itself failing (a server unreachable, a worker that will not
// start): no SQLSTATE of the query's making, so the tool reads it as infrastructure. A query stopped by
// the sandbox's own clock is a SqlStateError 57014, worded by the tool as the server's cancellation.

export const sandboxErrorCodes = ['query-refused', 'sandbox-unavailable'] as const;
export type SandboxErrorCode = (typeof sandboxErrorCodes)[number];

export class SandboxError extends Error {
  override readonly name = 'SandboxError';
  readonly code: SandboxErrorCode;
  constructor(code: SandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A driver-shaped error carrying a SQLSTATE in `code`, as pg, PGlite and Neon raise them. */
export class SqlStateError extends Error {
  override readonly name = 'SqlStateError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A query stopped by the sandbox's own clock (a killed worker, a client-side deadline): SQLSTATE 57014. */
export function timeoutError(timeoutMs: number): SqlStateError {
  return new SqlStateError('57014', `canceling statement due to statement timeout (${timeoutMs} ms)`);
}
