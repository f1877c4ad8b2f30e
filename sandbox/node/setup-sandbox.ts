// Provisioning a sandbox database on a Postgres server (`edgerl sandbox setup`): the database, the
// reader role (password given or generated), the sample seed, the grants and revokes; idempotent (a
// second run keeps the data and reapplies the privileges). Runs as an owner/admin URL and returns the
// reader's URL. On a managed Postgres whose owner is not a superuser some REVOKEs on built-in functions
// are no-ops; they are reported in `stillExecutable` rather than hidden.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  defaultReaderDefaults,
  quoteIdentifier,
  type ReaderDefaults,
  readerGrantStatements,
  readerRoleAttributes,
  revokedCatalogRelations,
  revokedFunctionNames,
  revokedSignaturesQuery,
  revokeExecuteStatements,
  stillExecutableQuery,
  stillReadableQuery,
} from '../reader-privileges.ts';
import { sampleSeedSql } from '../sample-seed.ts';
import { defaultReaderRole, defaultSandboxDatabase } from '../sandbox-names.ts';

export interface SetupSandboxOptions {
  /** A role that may create databases and roles (on Neon: the project owner). */
  readonly adminUrl: string;
  readonly database?: string;
  readonly role?: string;
  /** Default: 24 random bytes, base64url. Every run sets it, so a run without one rotates it. */
  readonly password?: string;
  readonly defaults?: ReaderDefaults;
}

export interface SandboxSetup {
  /** postgres://role:password@host/database: the SQL_DATABASE_URL for the edge. */
  readonly readerUrl: string;
  readonly database: string;
  readonly role: string;
  readonly createdDatabase: boolean;
  readonly createdRole: boolean;
  readonly seeded: boolean;
  /** Signatures of revoked functions the reader may still execute (empty when every revoke took). */
  readonly stillExecutable: readonly string[];
  /** Revoked catalog relations the reader may still read (empty when every revoke took). */
  readonly stillReadable: readonly string[];
}

const identifierPattern = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export async function setupSandbox(options: SetupSandboxOptions): Promise<SandboxSetup> {
  const database = options.database ?? defaultSandboxDatabase;
  const role = options.role ?? defaultReaderRole;
  for (const [field, name] of [
    ['database', database],
    ['role', role],
  ] as const) {
    if (!identifierPattern.test(name))
      throw new Error(`${field} must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*), got "${name}"`);
  }
  const password = options.password ?? randomBytes(24).toString('base64url');
  const defaults = options.defaults ?? defaultReaderDefaults;
  const admin = new pg.Client({ connectionString: options.adminUrl });
  await admin.connect();
  let createdRole = false;
  let createdDatabase = false;
  try {
    const roleExists =
      (await admin.query('select 1 from pg_roles where rolname = $1', [role])).rowCount === 1;
    const attributes = readerRoleAttributes(password);
    if (roleExists) {
      await admin.query(`ALTER ROLE ${quoteIdentifier(role)} ${attributes}`);
    } else {
      await admin.query(`CREATE ROLE ${quoteIdentifier(role)} ${attributes}`);
      createdRole = true;
    }
    const databaseExists =
      (await admin.query('select 1 from pg_database where datname = $1', [database])).rowCount === 1;
    if (!databaseExists) {
      // CREATE DATABASE cannot run in a transaction: one plain statement.
      await admin.query(`CREATE DATABASE ${quoteIdentifier(database)}`);
      createdDatabase = true;
    }
  } finally {
    await admin.end();
  }
  const target = new pg.Client({ connectionString: withDatabase(options.adminUrl, database) });
  await target.connect();
  try {
    await target.query('BEGIN');
    const seeded = (await target.query("select 1 from pg_namespace where nspname = 'sample'")).rowCount === 0;
    if (seeded) await target.query(sampleSeedSql);
    for (const statement of readerGrantStatements(role, database, defaults)) await target.query(statement);
    const signatures = await target.query<{ signature: string }>(revokedSignaturesQuery, [
      [...revokedFunctionNames],
    ]);
    for (const statement of revokeExecuteStatements(signatures.rows.map((row) => row.signature))) {
      await target.query(statement);
    }
    await target.query('COMMIT');
    const open = await target.query<{ signature: string }>(stillExecutableQuery, [
      [...revokedFunctionNames],
      role,
    ]);
    const readable = await target.query<{ relname: string }>(stillReadableQuery, [
      [...revokedCatalogRelations],
      role,
    ]);
    return {
      readerUrl: readerUrl(options.adminUrl, database, role, password),
      database,
      role,
      createdDatabase,
      createdRole,
      seeded,
      stillExecutable: open.rows.map((row) => row.signature),
      stillReadable: readable.rows.map((row) => row.relname),
    };
  } catch (error) {
    await target.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    await target.end();
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

function readerUrl(adminUrl: string, database: string, role: string, password: string): string {
  const parsed = new URL(withDatabase(adminUrl, database));
  parsed.username = role;
  parsed.password = password;
  return parsed.toString();
}
