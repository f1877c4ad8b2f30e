import { openStore } from '../db/open-store.ts';
const store = await openStore({ dataDir: process.argv[2] as string, migrations: 'skip' });
const r = await store.sql.query(process.argv[3] as string);
for (const row of r.rows) console.log(JSON.stringify(row));
await store.close();
