// Runs a hot-path statement as a named prepared statement: node-postgres (and Neon's pool, which
// speaks the same protocol; Hyperdrive passes prepared statements through) parses it once per
// connection, and Postgres then plans it once too: after five executions it keeps a generic plan when
// that costs no more than the custom ones ("PREPARE", Notes, Postgres manual). For the append
// statements planning was most of the server's time per call (0.7-0.9 ms planning against 0.3 ms
// executing, EXPLAIN ANALYZE on Postgres 15). PGlite's driver has no named statements and ignores
// the name. A name stands for one text for the life of the process (node-postgres refuses one name
// with two texts), so callers pass statements whose text never varies with the values: every value a
// parameter. The number of texts is bounded; past the bound a statement runs unnamed, as db.execute
// would.
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { StoreDb } from './store-db.ts';

const dialect = new PgDialect();
const names = new Map<string, string>();
/** Far above the store's statement variants; a guard against a text built from values. */
const maxNames = 64;

export function executeNamed(db: StoreDb, statement: SQL): Promise<unknown> {
  const query = dialect.sqlToQuery(statement);
  let name = names.get(query.sql);
  if (name === undefined && names.size < maxNames) {
    name = `edgerl_${names.size}`;
    names.set(query.sql, name);
  }
  return db._.session.prepareQuery(query, undefined, name, false).execute();
}
