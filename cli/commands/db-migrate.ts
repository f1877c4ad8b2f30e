// `edgerl db migrate`: applies the committed migrations to the configured database (DATABASE_URL, or
// the embedded store) and says what it applied.
import { withSqlState } from '../../db/database-errors.ts';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { defineCommand, stringFlag } from '../command.ts';

export const dbMigrateCommand = defineCommand({
  usage: `Usage: edgerl db migrate [--database-url URL]

Applies every committed migration the database lacks (tables, views, the SQL agent's sample schema),
in one transaction. Run it from one place at a time.

Options:
  --database-url URL   postgres://… or memory:// (default: DATABASE_URL; unset: the embedded store
                       in EDGERL_DATA_DIR, default .edgerl/pgdata)`,
  options: { 'database-url': { type: 'string' } },
  async run({ values, env, stdout }) {
    const { openStore } = await import('../../db/drivers/open-store.ts');
    const config = storeConfigFromEnv(env, { url: stringFlag(values, 'database-url') });
    const store = await openStore({ url: config.url, dataDir: config.dataDir, migrations: 'skip' });
    try {
      const report = await store.migrate().catch((error: unknown) => {
        throw withSqlState(error);
      });
      const line =
        report.applied.length === 0
          ? `${store.target}: up to date (${report.total} migrations)`
          : `${store.target}: applied ${report.applied.length} of ${report.total} migrations (${report.applied.join(', ')})`;
      stdout.write(`${line}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
});
