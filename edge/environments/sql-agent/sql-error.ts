// Reads a failed query's error by duck typing (see ReadOnlySql): the store's own refusal, the
// SQLSTATE that pg, PGlite and Neon errors carry in `code` (on the error or down its `cause`
// chain), and from that whether the query was at fault or the database unreachable.

const sqlStatePattern = /^[0-9A-Z]{5}$/;
/** A wrapper or two around the driver's error is usual; a longer chain is not worth following. */
const maxCauseDepth = 5;

function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/** The first SQLSTATE on the error or its causes. */
export function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth <= maxCauseDepth && current !== undefined; depth++) {
    const code = codeOf(current);
    if (typeof code === 'string' && sqlStatePattern.test(code)) return code;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** The implementation refused the statement itself (e.g. the store's keyword check). */
export function isRefusedStatement(error: unknown): boolean {
  return codeOf(error) === 'query-refused';
}

/**
 * Refusals by the database: statement timeout, the sandbox's temp-file bound, a write in a read-only
 * transaction, no privilege.
 */
export function refusalOf(sqlState: string | undefined, timeoutMs: number): string | undefined {
  switch (sqlState) {
    case '57014':
      return `the query was cancelled after running ${timeoutMs} ms; make it cheaper`;
    case '53400':
      return 'the query spilled more to disk than the sandbox allows (temp_file_limit); make it cheaper';
    case '25006':
      return 'the database is read-only';
    case '42501':
      return 'permission denied: only the shop tables can be read';
    default:
      return undefined;
  }
}

/**
 * Classes a query can cause (PostgreSQL Appendix A): 0A unsupported, 21 cardinality, 22 data,
 * 23 constraint, 25 transaction state, 2B dependencies, 42 syntax or access, 54 program limits,
 * plus 57014 (statement timeout) and 53400 (configuration_limit_exceeded: the reader role's
 * temp_file_limit, a bound the sandbox sets, which a runaway query may meet before the timeout on a fast
 * machine). Anything else, or no SQLSTATE at all (class 53's disk full, out of memory and too many
 * connections included), is an infrastructure failure.
 */
export function isQueryFault(sqlState: string | undefined): boolean {
  if (sqlState === undefined) return false;
  return (
    sqlState === '57014' ||
    sqlState === '53400' ||
    ['0A', '21', '22', '23', '25', '2B', '42', '54'].includes(sqlState.slice(0, 2))
  );
}
