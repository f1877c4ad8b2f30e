// Reads the rows of a raw `db.execute` result. Every driver the store supports (PGlite, node-postgres,
// Neon) returns an object with `rows`; drizzle types it per driver, so the driver-agnostic StoreDb
// only knows `unknown`.
export function rowsOf<Row>(result: unknown): Row[] {
  const rows = (result as { rows?: unknown }).rows;
  if (!Array.isArray(rows)) throw new Error('database driver returned a result without rows');
  return rows as Row[];
}
