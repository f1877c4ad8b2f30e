// `edgerl demo`, interim: opens the embedded store (migrating it on first use) and shows what it
// holds, one line per table, with a hint to explore it with `edgerl sql`. The full demo replaces it.
import { openStore } from '../../db/open-store.ts';
import { storeConfigFromEnv } from '../../db/store-config.ts';
import { defineCommand } from '../command.ts';

export const demoCommand = defineCommand({
  name: ['demo'],
  summary: 'Open the trajectory store and show what it holds',
  usage: `Usage: edgerl demo

Opens the store (DATABASE_URL, else the embedded store in EDGERL_DATA_DIR, default .edgerl/pgdata,
migrated on first use) and prints the number of rows in each table.`,
  options: {},
  async run({ env, stdout }) {
    const config = storeConfigFromEnv(env);
    const store = await openStore({ url: config.url, dataDir: config.dataDir, migrations: 'apply' });
    try {
      const tables = await store.sql.query(
        `select table_schema, table_name from information_schema.tables
         where table_schema in ('public', 'sample') and table_type = 'BASE TABLE'
         order by table_schema, table_name`,
      );
      const counts: [string, number][] = [];
      for (const [schema, table] of tables.rows as [string, string][]) {
        const quoted = `"${schema.replaceAll('"', '""')}"."${table.replaceAll('"', '""')}"`;
        const result = await store.sql.query(`select count(*) from ${quoted}`);
        counts.push([`${schema === 'public' ? '' : `${schema}.`}${table}`, Number(result.rows[0]?.[0])]);
      }
      const width = Math.max(...counts.map(([name]) => name.length));
      stdout.write(`edgerl trajectory store: ${store.target} (${store.driver})\n\n`);
      for (const [name, rows] of counts)
        stdout.write(`  ${name.padEnd(width)}  ${String(rows).padStart(6)} rows\n`);
      stdout.write(
        '\nTry: npx edgerl sql "select * from group_summaries order by created_at desc limit 10"\n',
      );
      stdout.write('     npx edgerl sql "select * from sample.customers limit 5"\n');
      return 0;
    } finally {
      await store.close();
    }
  },
});
