// The sandbox over a node-postgres-style pool of reader connections: node-postgres on a server, the
// Neon serverless driver's WebSocket Pool in a Worker (typed structurally, so this file imports
// neither and stays Worker-safe). Each query borrows a connection, runs in a rolled-back READ ONLY
// transaction, then the connection is reset with DISCARD ALL (settings, cursors, prepared statements,
// LISTENs, temp tables, advisory locks) before going back; any failure to get that far destroys it.
import type { ReadOnlySql, SqlQueryOptions } from '../protocol/read-only-sql.ts';
import { sqlValueParsers } from '../protocol/sql-value-parsers.ts';
import { SandboxError, timeoutError } from './sandbox-error.ts';
import type { SandboxSession } from './sandbox-session.ts';
import { defaultSandboxLimits, runSandboxedQuery, type SandboxLimits } from './sandboxed-query.ts';

export interface SandboxPoolQuery {
  text: string;
  values?: unknown[];
  rowMode: 'array';
  types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => unknown };
  /** node-postgres's client-side deadline, in milliseconds: the query rejects and the connection is dropped. */
  query_timeout?: number;
}

export interface SandboxPoolClient {
  query(config: SandboxPoolQuery): Promise<{
    fields: readonly { name: string; dataTypeID: number }[];
    rows: unknown[][];
  }>;
  release(destroy?: boolean): void;
}

export interface SandboxPool {
  connect(): Promise<SandboxPoolClient>;
  end(): Promise<void>;
}

/** A driver's own `types.getTypeParser` (node-postgres's or Neon's). */
export type DriverTypeParser = (oid: number, format?: 'text' | 'binary') => unknown;

const asText = (text: string) => text;

/** Past the server's own statement timeout: the server's 57014 should normally come first. */
const clientGraceMs = 2_000;

/**
 * SQLSTATE classes that mean the connection or server failed, not the query (PostgreSQL Appendix A);
 * 53400 is not one: it is the reader role's temp_file_limit, met by the query, and the session is sound.
 */
const infrastructureClasses = /^(08|53(?!400)|57P|58|XX)/;

export interface PoolReadOnlySql extends ReadOnlySql {
  close(): Promise<void>;
}

/**
 * @param driverParser the driver's parsers, used for every type but those protocol/sql-value-parsers.ts
 * overrides: those arrive as text and runSandboxedQuery parses them, as the embedded sandbox does.
 */
export function poolReadOnlySql(
  pool: SandboxPool,
  driverParser: DriverTypeParser,
  limits: SandboxLimits = defaultSandboxLimits,
): PoolReadOnlySql {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      oid in sqlValueParsers ? asText : driverParser(oid, format),
  };
  return {
    async query(sql: string, options: SqlQueryOptions) {
      let client: SandboxPoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new SandboxError('sandbox-unavailable', 'the SQL sandbox database is unreachable', {
          cause: error,
        });
      }
      const deadline = options.timeoutMs + clientGraceMs;
      const session: SandboxSession = {
        async query(text, params) {
          const result = await client.query({
            text,
            ...(params.length > 0 ? { values: [...params] } : {}),
            rowMode: 'array',
            types,
            query_timeout: deadline,
          });
          return {
            fields: result.fields.map((field) => ({ name: field.name, typeId: field.dataTypeID })),
            rows: result.rows,
          };
        },
      };
      let reusable = false;
      try {
        const rows = await runSandboxedQuery(session, sql, options, limits);
        await session.query('DISCARD ALL', []);
        reusable = true;
        return rows;
      } catch (error) {
        if (error instanceof SandboxError) {
          reusable = await reset(session);
          throw error;
        }
        if (isClientTimeout(error)) throw timeoutError(options.timeoutMs);
        const sqlState = sqlStateOf(error);
        // The server answered with the query's error: roll back and reset; the connection stays usable.
        if (sqlState && !infrastructureClasses.test(sqlState)) reusable = await reset(session);
        throw error;
      } finally {
        client.release(!reusable);
      }
    },
    close: () => pool.end(),
  };
}

async function reset(session: SandboxSession): Promise<boolean> {
  try {
    await session.query('ROLLBACK', []);
    await session.query('DISCARD ALL', []);
    return true;
  } catch {
    return false;
  }
}

function sqlStateOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** node-postgres rejects a query past `query_timeout` with this message (pg/lib/client.js). */
function isClientTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}
