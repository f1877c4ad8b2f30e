// One untrusted query through a sandbox session: a READ ONLY transaction with its own statement timeout
// and search path, the statement held by a cursor (DECLARE accepts only a query, and FETCH stops a
// never-ending one after the rows asked for), a running byte count computed by the server so a huge
// cell never crosses the wire, then ROLLBACK: nothing the statement did is committed. Resetting the
// session afterwards (DISCARD ALL, or a new connection) is the caller's part: it knows the connection.
import { sqlValueParsers } from '../protocol/sql-value-parsers.ts';
import type { SqlQueryOptions, SqlRows } from '../protocol/read-only-sql.ts';
import { SandboxError } from './sandbox-error.ts';
import type { SandboxSession, SessionField } from './sandbox-session.ts';
import { splitStatements } from './split-statements.ts';

export interface SandboxLimits {
  /** Bytes of row text kept per query (Postgres's text form of each row, summed). */
  readonly resultBytes: number;
  /** Longest statement accepted, in characters. */
  readonly statementChars: number;
}

export const defaultSandboxLimits: SandboxLimits = {
  // 1 MiB: the verifier's 1,000 rows of shop data are a few tens of KiB; a repeat('x', 5e8) cell is not.
  resultBytes: 1024 * 1024,
  // Above the SQL tool's own 4,000-character check, so that check's clearer message comes first.
  statementChars: 100_000,
};

const cursorName = 'edgerl_sandbox_rows';

/** The one statement in `sql`, without a trailing `;`; refused when there is none or more than one. */
export function singleStatement(sql: string, limits: SandboxLimits): string {
  if (sql.length > limits.statementChars) {
    throw new SandboxError(
      'query-refused',
      `the query is ${sql.length} characters long; the limit is ${limits.statementChars}`,
    );
  }
  const statements = splitStatements(sql);
  const [statement] = statements;
  if (!statement) throw new SandboxError('query-refused', 'the query is empty');
  if (statements.length > 1) {
    throw new SandboxError('query-refused', `only one statement is allowed, got ${statements.length}`);
  }
  return statement.text;
}

/**
 * The statement as a subquery, its columns renamed by position (`edgerl_c1`, …: the statement's own
 * names may repeat or be empty), with the running sum of its rows' text size beside them and every
 * value of a row past the cap replaced by NULL. A newline before the closing parenthesis ends a
 * trailing `--` comment.
 */
function cappedCursorQuery(statement: string, columnCount: number): string {
  const names = Array.from({ length: columnCount }, (_, index) => `edgerl_c${index + 1}`);
  const aliases = columnCount > 0 ? `(${names.join(', ')})` : '';
  const values = names.map((name) => `CASE WHEN w.edgerl_bytes > $1 THEN NULL ELSE w.${name} END`);
  // ROWS … CURRENT ROW needs no look-ahead: the window streams, so FETCH still stops an endless query.
  return `SELECT ${[...values, 'w.edgerl_bytes > $1 AS edgerl_cut'].join(', ')}
FROM (SELECT q.*, sum(octet_length(q::text)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS edgerl_bytes
FROM (
${statement}
) AS q${aliases}) AS w`;
}

function parseValue(value: unknown, field: SessionField): unknown {
  const parser = sqlValueParsers[field.typeId];
  return parser && typeof value === 'string' ? parser(value) : value;
}

/**
 * Runs `sql` on `session` (which must be outside any transaction) and leaves the transaction rolled
 * back on success; on a failure the transaction may still be open: the caller resets or drops the session.
 */
export async function runSandboxedQuery(
  session: SandboxSession,
  sql: string,
  options: SqlQueryOptions,
  limits: SandboxLimits = defaultSandboxLimits,
): Promise<SqlRows> {
  const statement = singleStatement(sql, limits);
  const timeoutMs = Math.max(1, Math.floor(options.timeoutMs));
  const maxRows = Math.max(1, Math.floor(options.maxRows));
  await session.query('BEGIN READ ONLY', []);
  await session.query(`SET LOCAL statement_timeout = ${timeoutMs}`, []);
  await session.query('SET LOCAL search_path = sample', []);
  // LIMIT 0 plans the statement and runs none of it: its columns, names and types.
  const probe = await session.query(`SELECT * FROM (\n${statement}\n) AS q LIMIT $1`, [0]);
  await session.query(
    `DECLARE ${cursorName} NO SCROLL CURSOR FOR ${cappedCursorQuery(statement, probe.fields.length)}`,
    [limits.resultBytes],
  );
  // One row past the cap tells whether there were more.
  const fetched = await session.query(`FETCH FORWARD ${maxRows + 1} FROM ${cursorName}`, []);
  await session.query('ROLLBACK', []);
  const rows: unknown[][] = [];
  let truncated = fetched.rows.length > maxRows;
  for (const row of fetched.rows.slice(0, maxRows)) {
    if (row[probe.fields.length] === true) {
      truncated = true;
      break;
    }
    rows.push(probe.fields.map((field, index) => parseValue(row[index], field)));
  }
  if (rows.length === 0 && truncated) {
    throw new SandboxError(
      'query-refused',
      `the first row of the result is over ${limits.resultBytes} bytes; select less of it`,
    );
  }
  return { columns: probe.fields.map((field) => field.name), rows, ...(truncated ? { truncated } : {}) };
}
