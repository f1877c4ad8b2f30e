// Migrations on an empty database: a server store refuses to open unmigrated, migrating applies every
// committed migration once (recorded as drizzle-kit records them), and a second run applies nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedMigrations } from '../../db/embedded-migrations.ts';
import { isStoreError } from '../../db/errors.ts';
import { prepareSchema } from '../../db/migrate.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { errorMessage } from '../../protocol/error-message.ts';

let database: TestDatabase | undefined;
let store: Store;
const allTags = embeddedMigrations.map((migration) => migration.tag);

beforeAll(async () => {
  database = testServerUrl ? await createTestDatabase(testServerUrl) : undefined;
  store = await openStore({ url: database?.url ?? 'memory://', migrations: 'skip' });
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

describe('migrations', () => {
  it('finds every migration pending on an empty database and refuses to call it migrated', async () => {
    expect(await store.pendingMigrations()).toEqual(allTags);
    const error = await prepareSchema(store.db, 'check', store.target).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isStoreError(error, 'not-migrated')).toBe(true);
    expect(errorMessage(error)).toContain('edgerl db migrate');
  });

  it.runIf(testServerUrl)('refuses to open an unmigrated server store by default', async () => {
    const error = await openStore({ url: database?.url }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(isStoreError(error, 'not-migrated')).toBe(true);
  });

  it('applies each migration once and records the hashes drizzle-kit would', async () => {
    expect(await store.migrate()).toEqual({ applied: allTags, total: allTags.length });
    expect(await store.migrate()).toEqual({ applied: [], total: allTags.length });
    expect(await store.pendingMigrations()).toEqual([]);
    const recorded = await store.sql.query(
      'select hash from drizzle.__drizzle_migrations order by created_at',
    );
    expect(recorded.rows.flat()).toEqual(embeddedMigrations.map((migration) => migration.hash));
    const tables = await store.sql.query(
      "select count(*) from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    // policies, policy_versions, training_runs, tasks, experiments, experiment_arms, rollout_groups,
    // trajectories, turns, judge_scores, training_steps, policy_default_changes, policy_leases,
    // publications
    expect(tables.rows[0]?.[0]).toBe(14);
  });
});
