// SqlClient over a node-postgres-style pool: node-postgres itself, and the Neon serverless driver's
// WebSocket Pool (a fork of it). Typed structurally so this file imports neither and stays Worker-safe.
import type { SqlClient, SqlResult, SqlSession } from '../sql-client.ts';
import { sqlValueParsers } from '../../protocol/sql-value-parsers.ts';

export interface PoolQueryConfig {
  text: string;
  values?: unknown[];
  rowMode: 'array';
  types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => unknown };
}

export interface PoolQueryResult {
  fields: readonly { name: string }[];
  rows: unknown[][];
  rowCount: number | null;
  command: string;
}

export interface PoolClientLike {
  query(config: PoolQueryConfig): Promise<PoolQueryResult>;
  release(error?: Error | boolean): void;
}

export interface PoolLike {
  query(config: PoolQueryConfig): Promise<PoolQueryResult>;
  connect(): Promise<PoolClientLike>;
}

/**
 * @param driverParser the driver's own `types.getTypeParser`, used for every type we do not override.
 * @param extended whether the driver accepts `queryMode: 'extended'` (node-postgres does, Neon's fork not).
 */
export function poolSqlClient(
  pool: PoolLike,
  driverParser: (oid: number, format?: 'text' | 'binary') => unknown,
  extended: boolean,
): SqlClient {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      sqlValueParsers[oid] ?? driverParser(oid, format),
  };
  const run = async (target: Pick<PoolLike, 'query'>, text: string, params?: readonly unknown[]) => {
    const config: PoolQueryConfig = { text, rowMode: 'array', types };
    if (params) config.values = [...params];
    // The extended protocol refuses several statements in one string, as PGlite's query() does.
    if (extended) Object.assign(config, { queryMode: 'extended' });
    return toSqlResult(await target.query(config));
  };
  return {
    query: (text, params) => run(pool, text, params),
    async transaction(work, options = {}) {
      const client = await pool.connect();
      const session: SqlSession = { query: (text, params) => run(client, text, params) };
      try {
        await client.query({ text: options.readOnly ? 'begin read only' : 'begin', rowMode: 'array', types });
        const result = await work(session);
        await client.query({ text: 'commit', rowMode: 'array', types });
        client.release();
        return result;
      } catch (error) {
        try {
          await client.query({ text: 'rollback', rowMode: 'array', types });
          client.release();
        } catch {
          // The connection is unusable: tell the pool to discard it rather than hand it out again.
          client.release(true);
        }
        throw error;
      }
    },
  };
}

function toSqlResult(result: PoolQueryResult): SqlResult {
  return {
    columns: result.fields.map((field) => field.name),
    rows: result.rows,
    affectedRows: result.rowCount ?? undefined,
    command: result.command,
  };
}
