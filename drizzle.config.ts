// drizzle-kit configuration: `npm run db:generate` diffs db/schema against the last snapshot and writes
// a migration into db/migrations (committed). Applying migrations is `edgerl db migrate`, which runs the
// same files through drizzle's migrator on every driver (embedded, node-postgres, Neon).
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
  // Only `drizzle-kit migrate/studio/push` read credentials; `generate` works offline without them.
  ...(process.env.DATABASE_URL ? { dbCredentials: { url: process.env.DATABASE_URL } } : {}),
});
