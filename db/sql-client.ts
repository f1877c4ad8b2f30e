// Raw SQL access beside drizzle, for what the query builder cannot do: arbitrary user SQL with column
// order and duplicate names kept (`edgerl sql`), on a held connection.
// Each driver adapts to this in its own file; nothing here imports a driver.

export interface SqlResult {
  /** Column names in the order the query produced them (duplicates kept). */
  readonly columns: readonly string[];
  /** One array per row, aligned with `columns`. */
  readonly rows: readonly (readonly unknown[])[];
  /** Rows inserted, updated or deleted, when the driver reports it. */
  readonly affectedRows?: number;
  /** The command tag (`SELECT`, `INSERT`, …), when the driver reports it. */
  readonly command?: string;
}

export interface SqlSession {
  /** Runs one statement (the extended protocol: several statements are an error where drivers allow). */
  query(text: string, params?: readonly unknown[]): Promise<SqlResult>;
}

export interface SqlClient extends SqlSession {
  /** Runs `work` inside one transaction on one connection; rolls back if it throws. */
  transaction<T>(work: (session: SqlSession) => Promise<T>, options?: { readOnly?: boolean }): Promise<T>;
}
