// Where the store is, from the environment and command-line flags: the one place the variables are
// named and their defaults written. Entry points (CLI commands, benches, servers) call it with their
// env; the store itself never reads process.env.
import { defaultDataDir } from './store-location.ts';

export interface StoreConfig {
  /** `postgres://…` / `postgresql://…` for a server, `memory://` for a throwaway store; undefined: embedded. */
  readonly url: string | undefined;
  /** The embedded store's directory, relative to the working directory unless absolute. */
  readonly dataDir: string;
}

export interface StoreFlags {
  readonly url?: string;
  readonly dataDir?: string;
}

/**
 * - `DATABASE_URL`: the database (the usual name for it on Postgres hosts, Neon and Heroku alike);
 *   unset means the embedded PGlite store.
 * - `EDGERL_DATA_DIR`: the embedded store's directory; default `.edgerl/pgdata`.
 * Flags win over the environment.
 */
export function storeConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  flags: StoreFlags = {},
): StoreConfig {
  return {
    url: flags.url ?? (env.DATABASE_URL || undefined),
    dataDir: flags.dataDir ?? (env.EDGERL_DATA_DIR || defaultDataDir),
  };
}
