// Applies the committed migrations (embedded in embedded-migrations.ts, so this works in a Worker) with
// drizzle's own pg migrator, recording them in drizzle.__drizzle_migrations exactly as drizzle-kit does.
import { assertNever } from '../protocol/statuses.ts';
import { sql } from 'drizzle-orm';
import type { MigrationMeta } from 'drizzle-orm/migrator';
import { PgDialect, type PgSession } from 'drizzle-orm/pg-core';
import { type EmbeddedMigration, embeddedMigrations } from './embedded-migrations.ts';
import { StoreError } from './errors.ts';
import { rowsOf } from './rows-of.ts';
import type { StoreDb } from './store-db.ts';

export interface MigrationReport {
  /** Tags applied by this call, oldest first. */
  readonly applied: readonly string[];
  /** How many migrations the code knows. */
  readonly total: number;
}

const migrationsSchema = 'drizzle';
const migrationsTable = '__drizzle_migrations';

/** The migrations the database has not recorded yet, oldest first. */
export async function pendingMigrations(
  db: StoreDb,
  migrations: readonly EmbeddedMigration[] = embeddedMigrations,
): Promise<EmbeddedMigration[]> {
  const exists = rowsOf<{ present: boolean }>(
    await db.execute(
      sql`select to_regclass(${`${migrationsSchema}.${migrationsTable}`}) is not null as present`,
    ),
  );
  if (!exists[0]?.present) return [...migrations];
  const latest = rowsOf<{ created_at: string | number | null }>(
    await db.execute(
      sql`select max(created_at) as created_at from ${sql.identifier(migrationsSchema)}.${sql.identifier(migrationsTable)}`,
    ),
  );
  const appliedUpTo = Number(latest[0]?.created_at ?? 0);
  return migrations.filter((migration) => migration.folderMillis > appliedUpTo);
}

/** Applies every pending migration in one transaction. Run it from one process at a time. */
export async function migrateStore(
  db: StoreDb,
  migrations: readonly EmbeddedMigration[] = embeddedMigrations,
): Promise<MigrationReport> {
  const pending = await pendingMigrations(db, migrations);
  if (pending.length > 0) {
    const metas: MigrationMeta[] = migrations.map((migration) => ({
      sql: migration.sql.split('--> statement-breakpoint'),
      folderMillis: migration.folderMillis,
      hash: migration.hash,
      bps: migration.breakpoints,
    }));
    // The session's schema generic differs from the migrator's `Record<string, never>`; the migrator
    // only runs raw SQL through it, so the cast is sound.
    const session = db._.session as unknown as PgSession;
    await new PgDialect().migrate(metas, session, {
      migrationsFolder: '(embedded)',
      migrationsSchema,
      migrationsTable,
    });
  }
  return { applied: pending.map((migration) => migration.tag), total: migrations.length };
}

export const migrationModes = ['apply', 'check', 'skip'] as const;
export type MigrationMode = (typeof migrationModes)[number];

/** What a store opener does about migrations: apply them, insist they are applied, or neither. */
export async function prepareSchema(db: StoreDb, mode: MigrationMode, target: string): Promise<void> {
  switch (mode) {
    case 'apply':
      await migrateStore(db);
      return;
    case 'check':
      await assertMigrated(db, target);
      return;
    case 'skip':
      return;
    default:
      assertNever(mode, 'migration mode');
  }
}

/** Throws `not-migrated` when the database lags behind the code, naming the command that fixes it. */
export async function assertMigrated(db: StoreDb, target: string): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0) {
    const tags = pending.map((migration) => migration.tag).join(', ');
    throw new StoreError(
      'not-migrated',
      `${target} lacks ${pending.length} migration(s) (${tags}); run "edgerl db migrate" first`,
    );
  }
}
