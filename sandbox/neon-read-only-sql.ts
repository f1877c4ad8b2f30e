// The sandbox in a Worker: the Neon serverless driver's WebSocket Pool on the SQL_DATABASE_URL binding
// (the reader role on the sandbox database). Like the store's pool it must not outlive the request or
// queue batch that opened it: close it in waitUntil. Worker-safe: no pg, no PGlite, no Node built-ins.
import { Pool, types } from '@neondatabase/serverless';
import {
  type DriverTypeParser,
  poolReadOnlySql,
  type PoolReadOnlySql,
  type SandboxPool,
} from './pool-read-only-sql.ts';

export function neonReadOnlySql(url: string): PoolReadOnlySql {
  // neonConfig (WebSocket proxy, TLS) is global to the module and already set by the store's opener.
  const pool = new Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  return poolReadOnlySql(pool as unknown as SandboxPool, types.getTypeParser as DriverTypeParser);
}
