// The embedded SQL sandbox (no sandbox URL: the Node edge, `edgerl rollout`, the demo): its own PGlite
// in a worker thread, opened as the reader role, so a query never runs on the edge's event loop and a
// timeout always fires: past timeoutMs the host terminates the worker (WebAssembly cannot be
// interrupted from inside) and the next query gets a fresh one. The database is built once per
// process as the superuser (seed, role, grants, revokes), dumped, and each worker loads the dump; with
// a `cacheDir` the dump is kept on disk (sandbox-dump-cache.ts) and later processes load it instead of
// building. `warm()` builds (or loads) it and starts the first worker ahead of the first query: the
// Node edge does it before the first sql episode's first turn, so no tool timeout pays for the build. Queries run one at
// a time (PGlite is one backend); the time a query waits its turn or for a worker to start is not
// counted against its timeout.
import type { SqlQueryOptions } from '../../protocol/read-only-sql.ts';
import { sqlValueParsers } from '../../protocol/sql-value-parsers.ts';
import type { PoolReadOnlySql } from '../pool-read-only-sql.ts';
import {
  defaultReaderDefaults,
  quoteIdentifier,
  readerGrantStatements,
  readerRoleAttributes,
  revokedFunctionNames,
  revokedSignaturesQuery,
  revokeExecuteStatements,
} from '../reader-privileges.ts';
import { sampleSeedSql } from '../sample-seed.ts';
import { SandboxError, timeoutError } from '../sandbox-error.ts';
import { defaultSandboxLimits, runSandboxedQuery, type SandboxLimits } from '../sandboxed-query.ts';
import { type SandboxDumpCache, sandboxDumpCache, sandboxDumpKey } from './sandbox-dump-cache.ts';
import { SandboxWorker } from './sandbox-worker.ts';

export const embeddedReaderRole = 'edgerl_sql_reader';

export interface EmbeddedSandboxStats {
  /** Milliseconds the one-time build took (seed, grants, dump), or loading the cached dump, once it ran. */
  readonly buildMs?: number;
  /** Whether the dump came from the cache directory rather than a build. */
  readonly cached?: boolean;
  /** Milliseconds the latest worker took from start to ready as the reader. */
  readonly lastStartMs?: number;
  /** Workers started so far (one more after each timeout). */
  readonly starts: number;
}

export interface EmbeddedReadOnlySql extends PoolReadOnlySql {
  readonly stats: EmbeddedSandboxStats;
  /** Builds (or loads) the database and starts the first worker now; rejects as the first query would. */
  warm(): Promise<void>;
}

export interface EmbeddedSandboxOptions {
  readonly limits?: SandboxLimits;
  /** Where the built dump is kept between processes; none: every process builds its own. */
  readonly cacheDir?: string;
  /** The database the reader sees; default the sample shop (sample-seed.ts). */
  readonly seedSql?: string;
}

interface Dump {
  readonly bytes: ArrayBuffer;
  /** The cache entry it was read from, when it was. */
  readonly cachedAs?: string;
}

export function embeddedReadOnlySql(options: EmbeddedSandboxOptions = {}): EmbeddedReadOnlySql {
  const limits = options.limits ?? defaultSandboxLimits;
  const seedSql = options.seedSql ?? sampleSeedSql;
  const cache = options.cacheDir === undefined ? undefined : sandboxDumpCache(options.cacheDir);
  const textTypeIds = Object.keys(sqlValueParsers).map(Number);
  const stats: { buildMs?: number; cached?: boolean; lastStartMs?: number; starts: number } = { starts: 0 };
  let dump: Promise<Dump> | undefined;
  let current: Promise<SandboxWorker> | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  let closed = false;

  const obtainDump = async (useCache: boolean): Promise<Dump> => {
    const started = performance.now();
    const key = cache ? sandboxDumpKey(buildInputs(seedSql)) : undefined;
    const stored = useCache && cache && key ? await cache.read(key) : undefined;
    if (stored && key) {
      stats.buildMs = performance.now() - started;
      stats.cached = true;
      return { bytes: stored, cachedAs: key };
    }
    const built = await buildDump(textTypeIds, seedSql);
    stats.buildMs = built.ms;
    stats.cached = false;
    // A cache that cannot be written costs the next process a build, not this one its sandbox.
    if (cache && key) await cache.write(key, built.bytes).catch(() => undefined);
    return { bytes: built.bytes };
  };

  const startReader = (bytes: ArrayBuffer) =>
    SandboxWorker.start({ dump: bytes.slice(0), username: embeddedReaderRole, textTypeIds });

  const readerWorker = async (): Promise<SandboxWorker> => {
    const started = performance.now();
    dump ??= obtainDump(true);
    let built: Dump;
    try {
      built = await dump;
    } catch (error) {
      dump = undefined;
      throw error;
    }
    let worker: SandboxWorker;
    try {
      worker = await startReader(built.bytes);
    } catch (error) {
      if (!built.cachedAs) throw error;
      // A cached dump that does not load (truncated, or from another build): drop it and build afresh.
      await (cache as SandboxDumpCache).remove(built.cachedAs);
      dump = obtainDump(false);
      worker = await startReader((await dump).bytes);
    }
    // PGlite's `username` acts like SET ROLE (the session user stays the superuser, and DISCARD ALL
    // would return to it): make the reader the session user too, then check both.
    await worker.exec(`SET SESSION AUTHORIZATION ${quoteIdentifier(embeddedReaderRole)}`);
    await checkIdentity(worker);
    stats.starts += 1;
    stats.lastStartMs = performance.now() - started;
    return worker;
  };

  const workerNow = async (): Promise<SandboxWorker> => {
    current ??= readerWorker();
    try {
      const worker = await current;
      if (worker.alive) return worker;
    } catch (error) {
      current = undefined;
      throw new SandboxError('sandbox-unavailable', 'the embedded SQL sandbox did not start', {
        cause: error,
      });
    }
    current = readerWorker();
    return workerNow();
  };

  const discard = async (worker: SandboxWorker) => {
    current = undefined;
    await worker.terminate();
  };

  const run = async (sql: string, options: SqlQueryOptions) => {
    if (closed) throw new SandboxError('sandbox-unavailable', 'the SQL sandbox is closed');
    const worker = await workerNow();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), options.timeoutMs);
    });
    const running = runSandboxedQuery(worker, sql, options, limits).then(
      (rows) => ({ rows }),
      (error: unknown) => ({ error }),
    );
    const outcome = await Promise.race([running, expired]);
    clearTimeout(timer);
    if (outcome === 'expired') {
      await discard(worker);
      throw timeoutError(options.timeoutMs);
    }
    if (!worker.alive) {
      // The worker died under the query (PGlite out of memory): the query's doing; the next one gets a new worker.
      current = undefined;
      throw new SandboxError(
        'query-refused',
        'the query stopped the SQL sandbox (out of memory?); ask for less',
        {
          cause: 'error' in outcome ? outcome.error : undefined,
        },
      );
    }
    if (!(await reset(worker))) await discard(worker);
    if ('error' in outcome) throw outcome.error;
    return outcome.rows;
  };

  return {
    stats,
    async warm() {
      if (closed) throw new SandboxError('sandbox-unavailable', 'the SQL sandbox is closed');
      await workerNow();
    },
    query(sql, options) {
      const result = tail.then(() => run(sql, options));
      tail = result.catch(() => {});
      return result;
    },
    async close() {
      closed = true;
      await tail;
      const worker = await current?.catch(() => undefined);
      await worker?.terminate();
      current = undefined;
    },
  };
}

/** Rolls back whatever is open and resets the session; false when the worker cannot be trusted after it. */
async function reset(worker: SandboxWorker): Promise<boolean> {
  try {
    await worker.query('ROLLBACK', []);
    await worker.query('DISCARD ALL', []);
    await checkIdentity(worker);
    return true;
  } catch {
    return false;
  }
}

async function checkIdentity(worker: SandboxWorker): Promise<void> {
  const { rows } = await worker.query('SELECT current_user::text, session_user::text', []);
  const [currentUser, sessionUser] = rows[0] ?? [];
  if (currentUser !== embeddedReaderRole || sessionUser !== embeddedReaderRole) {
    throw new Error(`the sandbox session is ${String(currentUser)}/${String(sessionUser)}, not the reader`);
  }
}

/** What a build runs, for the cache key: a change to any of it (seed, role, grants, revokes) rebuilds. */
function buildInputs(seedSql: string): string[] {
  return [
    seedSql,
    embeddedReaderRole,
    readerRoleAttributes(undefined),
    // The database's name is read at build time; PGlite's is always the same, so a stand-in will do.
    ...readerGrantStatements(embeddedReaderRole, 'database', defaultReaderDefaults),
    revokedSignaturesQuery,
    ...revokedFunctionNames,
  ];
}

/** The sandbox database as the superuser builds it: seed, reader role, grants, revokes; then dumped. */
async function buildDump(
  textTypeIds: readonly number[],
  seedSql: string,
): Promise<{ bytes: ArrayBuffer; ms: number }> {
  const started = performance.now();
  const admin = await SandboxWorker.start({ textTypeIds });
  try {
    await admin.exec(seedSql);
    await admin.exec(`CREATE ROLE ${quoteIdentifier(embeddedReaderRole)} ${readerRoleAttributes(undefined)}`);
    const database = (await admin.query('SELECT current_database()::text', [])).rows[0]?.[0];
    if (typeof database !== 'string') throw new Error('PGlite named no current database');
    for (const statement of readerGrantStatements(embeddedReaderRole, database, defaultReaderDefaults)) {
      await admin.exec(statement);
    }
    const signatures = await admin.query(revokedSignaturesQuery, [[...revokedFunctionNames]]);
    for (const statement of revokeExecuteStatements(signatures.rows.map((row) => String(row[0])))) {
      await admin.exec(statement);
    }
    return { bytes: await admin.dump(), ms: performance.now() - started };
  } finally {
    await admin.terminate();
  }
}
