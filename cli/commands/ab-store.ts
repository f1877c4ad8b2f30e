// What the `edgerl ab` commands share: the --database-url flag, opening the store for one command (the
// embedded store migrates itself; a server must be migrated), and store errors (including constraint
// violations from a concurrent writer, mapped by the Store) reported by their message.
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import type { Store } from '../../db/store.ts';
import { parseReplicaList } from '../../protocol/replica-url.ts';
import { type CommandInput, stringFlag, UsageError } from '../command.ts';

export const databaseUrlOption = { 'database-url': { type: 'string' } } as const;

export const databaseUrlUsage = `  --database-url URL    postgres://… or memory:// (default: DATABASE_URL; unset: the embedded store in
                        EDGERL_DATA_DIR, default .edgerl/pgdata)`;

export async function withAbStore<T>(
  input: Pick<CommandInput, 'values' | 'env'>,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const { openStore } = await import('../../db/drivers/open-store.ts');
  const config = storeConfigFromEnv(input.env, { url: stringFlag(input.values, 'database-url') });
  const store = await openStore({ url: config.url, dataDir: config.dataDir });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * The inference fleet the edge routes over (EDGERL_INFERENCE_REPLICAS, as the edge reads it), when set: a
 * version made the default must be ready on one of these replicas.
 */
export function fleetFromEnv(env: NodeJS.ProcessEnv): { fleet: string[] } | Record<string, never> {
  const replicas = env.EDGERL_INFERENCE_REPLICAS ? parseReplicaList(env.EDGERL_INFERENCE_REPLICAS) : [];
  return replicas.length > 0 ? { fleet: replicas } : {};
}

/** Exactly one positional argument, named in the message when missing. */
export function onePositional(positionals: readonly string[], what: string, usage: string): string {
  const [value, ...rest] = positionals;
  if (!value?.trim() || rest.length > 0) {
    throw new UsageError(`give exactly one ${what}: ${usage}`);
  }
  return value.trim();
}
