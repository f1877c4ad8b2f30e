// The capability the SQL environment needs: read-only queries against the sample shop database.
// The sandbox (sandbox/) implements it, in its own database as a role that can read the shop and
// nothing else; this file only states the contract, so the environment never imports a driver.

export interface SqlQueryOptions {
  /** Server-side statement timeout in milliseconds; a query running longer is cancelled. */
  readonly timeoutMs: number;
  /** At most this many rows come back (the rest are dropped by the implementation). */
  readonly maxRows: number;
}

export interface SqlRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** More rows existed than `maxRows`, or the rest were over the implementation's byte cap. */
  readonly truncated?: boolean;
}

/**
 * Runs one statement in a read-only transaction, unqualified names resolving to the sample schema;
 * nothing it changes (settings, locks, cursors) survives into the next call.
 * Failures are thrown; the SQL tool reads them by duck typing, so any wrapper works as long as it
 * (a) uses `code: 'query-refused'` for a statement it refused to run, and (b) keeps the driver's
 * error, whose `code` is the SQLSTATE (as pg, PGlite and Neon all expose it), as the error or in its
 * `cause` chain. SQLSTATEs tell a refusal (57014 statement timeout, 25006 write in a read-only
 * transaction, 42501 no privilege) from an ordinary SQL error, and both from a lost connection.
 */
export interface ReadOnlySql {
  query(sql: string, options: SqlQueryOptions): Promise<SqlRows>;
}
