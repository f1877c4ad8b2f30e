// Column helpers shared by the schema files: timestamptz columns, and CHECK constraints that keep a
// text column inside one of the closed unions of protocol/statuses.ts (so plain SQL writes are held
// to the same sets as the TypeScript types). Postgres enums are avoided: removing a value needs a rewrite.
import { type SQL, sql } from 'drizzle-orm';
import { check, type PgColumn, timestamp } from 'drizzle-orm/pg-core';

/** A `timestamptz` column read as a JS Date. */
export function timestamptz(name: string) {
  return timestamp(name, { withTimezone: true, mode: 'date' });
}

/** `CHECK (column IN ('a', 'b', …))` named `<table>_<column>_check`. */
export function checkOneOf(name: string, column: PgColumn, values: readonly string[]) {
  const list = values.map((value) => `'${value.replaceAll("'", "''")}'`).join(', ');
  const condition: SQL = sql`${column} in (${sql.raw(list)})`;
  return check(name, condition);
}
