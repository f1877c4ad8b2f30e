// Running one untrusted, read-only SQL statement (the SQL agent's tool): refused before it runs unless
// it is a single SELECT-like statement; then run in a READ ONLY transaction with a statement timeout,
// so the server refuses any write the keyword check missed. Failures become `query-failed` errors
// carrying Postgres's message and SQLSTATE, which the environment shows the model.
// PGlite has no timer interrupts, so the timeout is enforced on servers only.
import { z } from 'zod';
import { findPostgresError } from '../database-errors.ts';
import { StoreError } from '../errors.ts';
import type { SqlClient } from '../sql-client.ts';
import { parseInput } from './parse-input.ts';
import { splitStatements } from './split-statements.ts';

/** First keywords of statements that only read. EXPLAIN ANALYZE of a write is still stopped by READ ONLY. */
export const readOnlyKeywords = ['select', 'with', 'values', 'table', 'show', 'explain'] as const;

const runReadOnlyQuerySchema = z.object({
  sql: z.string().min(1).max(100_000),
  /** Statement timeout in milliseconds (server side). */
  timeoutMs: z.number().int().min(1).max(600_000).default(5000),
  /** Rows returned at most; the rest are dropped and `truncated` is set. */
  maxRows: z.number().int().min(1).max(100_000).default(1000),
  /** Schemas to resolve unqualified names in, e.g. `sample` for the SQL agent's database. */
  searchPath: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a plain schema name'))
    .min(1)
    .optional(),
});
export type RunReadOnlyQueryInput = z.input<typeof runReadOnlyQuerySchema>;

export interface ReadOnlyQueryResult {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** True when the query produced more than maxRows rows. */
  readonly truncated: boolean;
}

export async function runReadOnlyQuery(
  client: SqlClient,
  input: RunReadOnlyQueryInput,
): Promise<ReadOnlyQueryResult> {
  const request = parseInput(runReadOnlyQuerySchema, input, 'runReadOnlyQuery');
  const statements = splitStatements(request.sql);
  const [statement] = statements;
  if (!statement) throw new StoreError('query-refused', 'the query is empty');
  if (statements.length > 1) {
    throw new StoreError('query-refused', `only one statement is allowed, got ${statements.length}`);
  }
  if (!(readOnlyKeywords as readonly string[]).includes(statement.keyword)) {
    throw new StoreError(
      'query-refused',
      `only read-only statements (${readOnlyKeywords.map((word) => word.toUpperCase()).join(', ')}) are allowed, got ${statement.keyword.toUpperCase() || 'no keyword'}`,
    );
  }
  try {
    const result = await client.transaction(
      async (session) => {
        await session.query("select set_config('statement_timeout', $1, true)", [`${request.timeoutMs}ms`]);
        if (request.searchPath) {
          await session.query("select set_config('search_path', $1, true)", [request.searchPath.join(', ')]);
        }
        return session.query(statement.text);
      },
      { readOnly: true },
    );
    return {
      columns: result.columns,
      rows: result.rows.slice(0, request.maxRows),
      truncated: result.rows.length > request.maxRows,
    };
  } catch (error) {
    const postgres = findPostgresError(error);
    // Connection and server-resource failures are infrastructure, not the query's fault: rethrown as is.
    if (!postgres || /^(08|53|57P)/.test(postgres.code)) throw error;
    throw new StoreError('query-failed', `${postgres.message} (SQLSTATE ${postgres.code})`, { cause: error });
  }
}
