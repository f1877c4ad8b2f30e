// A row a raw statement returned (column names, driver values) as drizzle's typed row for its table:
// for the few store writes written as one SQL statement (data-modifying CTEs), which the query
// builder cannot express, yet whose callers get the same row type as from the builder.
import { getTableColumns, type Table } from 'drizzle-orm';

export function rowOf<T extends Table>(table: T, raw: Record<string, unknown>): T['$inferSelect'] {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T['$inferSelect'];
}
