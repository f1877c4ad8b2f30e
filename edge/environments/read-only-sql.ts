// The capability the SQL environment needs: read-only queries against the shipped sample database.
// The store implements it (a read-only transaction on the `sample` schema); this file only states
// the contract, so the environment never imports a database driver.

export interface SqlQueryOptions {
  /** Server-side statement timeout in milliseconds; a query running longer is cancelled. */
  readonly timeoutMs: number;
  /** At most this many rows come back (the rest are dropped by the implementation). */
  readonly maxRows: number;
}

export interface SqlRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * Runs one statement in a read-only transaction, unqualified names resolving to the sample schema.
 * Failures are thrown; the SQL tool reads them by duck typing, so any wrapper works as long as it
 * (a) uses `code: 'query-refused'` for a statement it refused to run, and (b) keeps the driver's
 * error, whose `code` is the SQLSTATE (as pg, PGlite and Neon all expose it), as the error or in its
 * `cause` chain. SQLSTATEs tell a refusal (57014 statement timeout, 25006 write in a read-only
 * transaction, 42501 no privilege) from an ordinary SQL error, and both from a lost connection.
 */
export interface ReadOnlySql {
  query(sql: string, options: SqlQueryOptions): Promise<SqlRows>;
}
