// The SQL a sandbox database needs for its reader role, as statements to run as the database's owner:
// the role's defaults, SELECT on the sample shop and nothing else, and the side effects a default
// Postgres grants every role (through PUBLIC) closed. Shared by the embedded sandbox (built once in
// PGlite) and `edgerl sandbox setup` on a server. Creating the role and database is the caller's part.

/** The reader's session defaults (ALTER ROLE … SET); each query also sets them for its own transaction. */
export interface ReaderDefaults {
  /** statement_timeout, in milliseconds: a backstop above any tool's own timeout. */
  readonly statementTimeoutMs: number;
  /** idle_in_transaction_session_timeout, in milliseconds: a client that vanished mid-query lets go. */
  readonly idleInTransactionMs: number;
  /** temp_file_limit, in kilobytes: a sort or hash spilling to disk is stopped here. */
  readonly tempFileLimitKb: number;
  /** work_mem, in kilobytes, per sort or hash node. */
  readonly workMemKb: number;
}

export const defaultReaderDefaults: ReaderDefaults = {
  // Ten times the SQL agent's 1 s tool timeout: the per-query SET LOCAL is the real limit.
  statementTimeoutMs: 10_000,
  idleInTransactionMs: 10_000,
  // 64 MiB: no question about a 48-row shop needs a spill; a cross join that tries is stopped.
  tempFileLimitKb: 64 * 1024,
  // Postgres's own default (4 MB), written out so a server with a larger one does not lend it.
  workMemKb: 4 * 1024,
};

/**
 * Functions in pg_catalog that PUBLIC may execute and that act beyond the query's own result: write
 * large objects, signal or inspect other sessions, take session locks, send notifications, change
 * settings (set_config could switch `role` where the session user is a superuser, as in PGlite), run
 * SQL text of their own (the *_to_xml family, ts_stat, ts_rewrite: a second statement the cursor does
 * not see) or write WAL. Found by listing, on PostgreSQL 15 and PGlite 0.5 (PostgreSQL 17), as a fresh
 * role: `select proname from pg_proc where pronamespace = 'pg_catalog'::regnamespace and provolatile =
 * 'v' and has_function_privilege('<role>', oid, 'execute')`, then reading each one's documentation.
 * Left open on purpose: pg_sleep* (the statement timeout ends it), random/setseed, clock functions,
 * currval/lastval (need sequence privileges), the binary_upgrade_*, replication-slot and
 * pg_stop_making_pinned_objects functions (each checks superuser, REPLICATION or bootstrap mode
 * itself), size functions, the pg_stat_get_xact_* counters (this session's own).
 */
export const revokedFunctionNames = [
  // Large objects (PostgreSQL manual §35.4 "Server-Side Functions").
  'lo_close',
  'lo_creat',
  'lo_create',
  'lo_export',
  'lo_from_bytea',
  'lo_get',
  'lo_import',
  'lo_lseek',
  'lo_lseek64',
  'lo_open',
  'lo_put',
  'lo_tell',
  'lo_tell64',
  'lo_truncate',
  'lo_truncate64',
  'lo_unlink',
  'loread',
  'lowrite',
  // Notifications and advisory locks (§9.27.10 "Advisory Lock Functions"): session locks outlive a rollback.
  'pg_notify',
  'pg_advisory_lock',
  'pg_advisory_lock_shared',
  'pg_advisory_unlock',
  'pg_advisory_unlock_all',
  'pg_advisory_unlock_shared',
  'pg_advisory_xact_lock',
  'pg_advisory_xact_lock_shared',
  'pg_try_advisory_lock',
  'pg_try_advisory_lock_shared',
  'pg_try_advisory_xact_lock',
  'pg_try_advisory_xact_lock_shared',
  // Other sessions: a role may signal its own backends (other episodes' queries) and read their text.
  'pg_cancel_backend',
  'pg_terminate_backend',
  'pg_stat_get_activity',
  'pg_blocking_pids',
  'pg_safe_snapshot_blocking_pids',
  'pg_isolation_test_session_is_blocked',
  // Settings, and SQL run from inside a function.
  'set_config',
  'query_to_xml',
  'query_to_xml_and_xmlschema',
  'query_to_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'ts_stat',
  'ts_rewrite',
  // WAL and catalog writes open to PUBLIC.
  'pg_logical_emit_message',
  'pg_import_system_collations',
  // Transaction ids and snapshots: each call assigns a real xid even in a read-only transaction (a
  // flood of them brings the server towards wraparound, PostgreSQL manual §24.1.5), and an exported
  // snapshot is state another session can import (§9.28.5 "Snapshot Synchronization Functions").
  'txid_current',
  'pg_current_xact_id',
  'pg_export_snapshot',
  // The function behind pg_locks: every session's locks (revokedCatalogRelations closes the view).
  'pg_lock_status',
] as const;

/**
 * Catalog tables and views PUBLIC may read that describe the server beyond the shop: its databases,
 * its roles and memberships, and other sessions (their locks, their connections). No task needs
 * them. pg_authid and pg_shadow are closed to PUBLIC already. A view runs with its owner's rights,
 * so the views over pg_database and the session functions are closed one by one.
 */
export const revokedCatalogRelations = [
  'pg_database',
  'pg_stat_database',
  'pg_stat_database_conflicts',
  'pg_roles',
  'pg_user',
  'pg_group',
  'pg_auth_members',
  'pg_locks',
  'pg_stat_activity',
  'pg_stat_ssl',
  'pg_stat_gssapi',
] as const;

/** `"name"` with inner quotes doubled: a safe SQL identifier for any role or database name. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `'text'` with inner quotes doubled. */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * Statements that give `role` read access to the sample schema of `database` and close the rest, run in
 * that database by its owner (after the seed). Idempotent: each may run again on a database set up before.
 * `revoke execute` covers every overload: the caller expands `revokedFunctionNames` with
 * `revokeExecuteStatements` over the signatures pg_proc lists.
 */
export function readerGrantStatements(role: string, database: string, defaults: ReaderDefaults): string[] {
  const r = quoteIdentifier(role);
  const d = quoteIdentifier(database);
  return [
    // Only the reader (and the owner) may connect to the sandbox database, and nobody may create in it.
    `REVOKE ALL ON DATABASE ${d} FROM PUBLIC`,
    `GRANT CONNECT ON DATABASE ${d} TO ${r}`,
    'REVOKE ALL ON SCHEMA public FROM PUBLIC',
    // No DO blocks or functions written in plpgsql by the reader.
    'REVOKE USAGE ON LANGUAGE plpgsql FROM PUBLIC',
    `GRANT USAGE ON SCHEMA sample TO ${r}`,
    `GRANT SELECT ON ALL TABLES IN SCHEMA sample TO ${r}`,
    // Other sessions' query text and locks, the server's databases and roles (revokedCatalogRelations).
    ...revokedCatalogRelations.map((relation) => `REVOKE SELECT ON pg_catalog.${relation} FROM PUBLIC`),
    `ALTER ROLE ${r} IN DATABASE ${d} SET default_transaction_read_only = on`,
    `ALTER ROLE ${r} IN DATABASE ${d} SET search_path = sample`,
    `ALTER ROLE ${r} IN DATABASE ${d} SET statement_timeout = ${defaults.statementTimeoutMs}`,
    `ALTER ROLE ${r} IN DATABASE ${d} SET idle_in_transaction_session_timeout = ${defaults.idleInTransactionMs}`,
    `ALTER ROLE ${r} IN DATABASE ${d} SET temp_file_limit = ${defaults.tempFileLimitKb}`,
    `ALTER ROLE ${r} IN DATABASE ${d} SET work_mem = ${defaults.workMemKb}`,
  ];
}

/** The query listing every overload of the revoked functions, as `regprocedure` text. */
export const revokedSignaturesQuery = `select p.oid::regprocedure::text as signature
  from pg_catalog.pg_proc p
 where p.pronamespace = 'pg_catalog'::regnamespace and p.proname = any($1::text[])
 order by 1`;

/** One REVOKE per signature (`lo_creat(integer)`; regprocedure text is already quoted where needed). */
export function revokeExecuteStatements(signatures: readonly string[]): string[] {
  return signatures.map((signature) => `REVOKE EXECUTE ON FUNCTION pg_catalog.${signature} FROM PUBLIC`);
}

/** Role attributes: a login with nothing else (CREATE ROLE / ALTER ROLE). */
export function readerRoleAttributes(password: string | undefined): string {
  const base =
    'LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 32';
  return password === undefined ? base : `${base} PASSWORD ${quoteLiteral(password)}`;
}

/**
 * Functions from `revokedFunctionNames` the role may still execute: empty when the revokes took. On a
 * managed Postgres whose owner is not a superuser a REVOKE on a built-in can be a no-op with a warning
 * (only the grantor may revoke); setup reports what stayed open instead of pretending.
 */
export const stillExecutableQuery = `select p.oid::regprocedure::text as signature
  from pg_catalog.pg_proc p
 where p.pronamespace = 'pg_catalog'::regnamespace and p.proname = any($1::text[])
   and pg_catalog.has_function_privilege($2, p.oid, 'execute')
 order by 1`;

/** Relations from `revokedCatalogRelations` the role may still read: empty when the revokes took. */
export const stillReadableQuery = `select c.relname
  from unnest($1::text[]) as c(relname)
 where pg_catalog.has_table_privilege($2, 'pg_catalog.' || pg_catalog.quote_ident(c.relname), 'select')
 order by 1`;
