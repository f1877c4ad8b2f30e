// Runs a hot-path statement as a prepared statement, so Postgres parses and plans it once per session
// rather than on every call: after five executions it keeps a generic plan when that costs no more
// than the custom ones ("PREPARE", Notes, Postgres manual). For the append statements planning was
// most of the server's time per call (0.7-0.9 ms planning against 0.3 ms executing, EXPLAIN ANALYZE
// on Postgres 15), and on PGlite parsing and planning more than half of the call.
//
// node-postgres (and Neon's pool, which speaks the same protocol; Hyperdrive passes prepared
// statements through) prepares a named statement at the protocol level, once per connection.
// PGlite's driver has no named statements, so on an embedded store's own session (outside a
// transaction, whose handle is not the session's) the statement is prepared with SQL `PREPARE` and
// run with `EXECUTE` over the simple query protocol, one call into the backend where a parameterised
// query takes six, its values written as SQL literals: numbers as the shortest decimal that reads
// back to the same float64 (JavaScript's String), text dollar-quoted (`$edgerl$…$edgerl$`, taken as
// is whatever standard_conforming_strings says; text holding the delimiter runs as a plain query).
// A statement PGlite cannot prepare runs as a plain query too.
//
// A name stands for one text for the life of the process (node-postgres refuses one name with two
// texts), so callers pass statements whose text never varies with the values: every value a
// parameter. The number of texts is bounded; past the bound a statement runs unnamed.
import { entityKind, type SQL } from 'drizzle-orm';
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
  const session = db._.session;
  const embedded = name === undefined ? undefined : embeddedSession(session);
  if (embedded && name !== undefined) return executePrepared(embedded, name, query.sql, query.params);
  return session.prepareQuery(query, undefined, name, false).execute();
}

interface PgliteLike {
  /** The simple query protocol: statements separated by `;`, one call into the backend. */
  exec(text: string): Promise<unknown[]>;
  query(text: string, params?: unknown[]): Promise<unknown>;
  /** Only the PGlite instance has it, not a transaction's handle. */
  execProtocol(message: Uint8Array): Promise<unknown>;
}

/** The PGlite instance when the session is PGlite's own, outside a transaction. */
function embeddedSession(session: unknown): PgliteLike | undefined {
  const kind = (session as { constructor: { [entityKind]?: string } }).constructor[entityKind];
  if (kind !== 'PgliteSession') return undefined;
  const client = (session as { client?: Partial<PgliteLike> }).client;
  return typeof client?.execProtocol === 'function' && typeof client.exec === 'function'
    ? (client as PgliteLike)
    : undefined;
}

/** Per PGlite session: each statement prepared in it (true), or that it could not prepare (false). */
const sessions = new WeakMap<PgliteLike, Map<string, boolean>>();

async function executePrepared(
  client: PgliteLike,
  name: string,
  text: string,
  params: readonly unknown[],
): Promise<unknown> {
  let prepared = sessions.get(client);
  if (!prepared) {
    prepared = new Map();
    sessions.set(client, prepared);
  }
  const literals = params.map(literalOf);
  const state = prepared.get(name);
  if (state === false || literals.some((literal) => literal === undefined)) {
    return client.query(text, [...params]);
  }
  const execute = literals.length > 0 ? `execute ${name}(${literals.join(', ')})` : `execute ${name}`;
  if (state === true) return last(await client.exec(execute));
  // The first call prepares and executes in one call (PREPARE is session state: an EXECUTE that fails
  // leaves it prepared). Parameter types come from the statement's own casts and comparisons.
  prepared.set(name, true);
  try {
    return last(await client.exec(`prepare ${name} as ${text}; ${execute}`));
  } catch (error) {
    const known = await client.query('select 1 from pg_prepared_statements where name = $1', [name]);
    if (rowsOf(known).length > 0) throw error; // prepared: the statement itself failed
    prepared.set(name, false);
    return client.query(text, [...params]);
  }
}

/** The last statement's result of a simple query. */
function last(results: unknown[]): unknown {
  return results[results.length - 1];
}

/** Dollar quoting: the text is taken as is, whatever standard_conforming_strings says. */
const quote = '$edgerl$';

/** A value as an SQL literal, or undefined for one this does not write (then the query runs plain). */
function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'string') return value.includes(quote) ? undefined : `${quote}${value}${quote}`;
  return undefined;
}

function rowsOf(result: unknown): unknown[] {
  const rows = (result as { rows?: unknown }).rows;
  return Array.isArray(rows) ? rows : [];
}
