// The sandbox on a Postgres server from Node: node-postgres connections as the reader role named in
// the sandbox URL (SQL_DATABASE_URL), never the store's. Idle connections are few and short-lived: an
// episode's queries come seconds apart, and each is reset before reuse.
import pg from 'pg';
import {
  type DriverTypeParser,
  poolReadOnlySql,
  type PoolReadOnlySql,
  type SandboxPool,
} from '../pool-read-only-sql.ts';
import type { SandboxLimits } from '../sandboxed-query.ts';

export interface ServerSandboxOptions {
  /** postgres://reader:password@host/database (the reader `edgerl sandbox setup` printed). */
  readonly url: string;
  /** Connections at most; a query waits for one beyond that. Default 4. */
  readonly maxConnections?: number;
  readonly limits?: SandboxLimits;
}

export function serverReadOnlySql(options: ServerSandboxOptions): PoolReadOnlySql {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 4,
    idleTimeoutMillis: 10_000,
    // Startup as well as queries: an unreachable sandbox is an infrastructure error, soon.
    connectionTimeoutMillis: 10_000,
  });
  // A connection dropped while idle (server restart) is replaced on the next connect.
  pool.on('error', () => {});
  return poolReadOnlySql(
    pool as unknown as SandboxPool,
    pg.types.getTypeParser as DriverTypeParser,
    options.limits,
  );
}
