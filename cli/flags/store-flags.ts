// The store's two flags (and their variables) as documented config fields, for the commands that open
// the store: which Postgres, or where the embedded one lives. Resolving them is db/drivers/store-config.ts's.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';

/** Fresh schemas per call: the docs registry keys on the schema, and each command has its own section. */
export function storeFlagFields(section?: string) {
  return {
    databaseUrl: documented(z.string().optional(), {
      doc: 'postgres://… or memory://; unset: the embedded store',
      flag: 'database-url',
      arg: 'URL',
      env: 'DATABASE_URL',
      ...(section ? { section } : {}),
    }),
    dataDir: documented(z.string().optional(), {
      doc: "the embedded store's directory",
      shownDefault: '.edgerl/pgdata',
      flag: 'data-dir',
      arg: 'DIR',
      env: 'EDGERL_DATA_DIR',
      ...(section ? { section } : {}),
    }),
  };
}
