// The drizzle database type every store function takes: any Postgres driver (PGlite, node-postgres,
// Neon), with the store's schema. Transactions are the same type, so functions compose inside one.
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from './schema/index.ts';

export type StoreSchema = typeof schema;
export type StoreDb = PgDatabase<PgQueryResultHKT, StoreSchema>;
