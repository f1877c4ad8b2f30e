// The embedded copy of the migrations (what Workers run) must equal the committed files: compared
// with drizzle's own reader, which is what drizzle-kit and drizzle's file migrators use.
import { join } from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { describe, expect, it } from 'vitest';
import { embeddedMigrations } from './embedded-migrations.ts';

describe('embeddedMigrations', () => {
  it('matches db/migrations (run `npm run db:embed` after generating a migration)', () => {
    const files = readMigrationFiles({ migrationsFolder: join(import.meta.dirname, 'migrations') });
    expect(embeddedMigrations.map((migration) => migration.hash)).toEqual(files.map((file) => file.hash));
    expect(embeddedMigrations.map((migration) => migration.folderMillis)).toEqual(
      files.map((file) => file.folderMillis),
    );
    expect(embeddedMigrations.map((migration) => migration.sql.split('--> statement-breakpoint'))).toEqual(
      files.map((file) => file.sql),
    );
  });
});
