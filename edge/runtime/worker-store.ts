// Which store a Worker opens, chosen from the bindings present: the HYPERDRIVE binding first
// (node-postgres through Hyperdrive's pooled connections, Cloudflare's recommended path to Postgres),
// then the DATABASE_URL secret on Neon's WebSocket Pool. Both open per request or queue batch; the
// caller closes each in waitUntil. Leaves the SQL sandbox (EDGERL_SQL_DATABASE_URL) to worker.ts.
import { type HyperdriveLike, openHyperdriveStore } from '../../db/drivers/open-hyperdrive-store.ts';
import { type NeonSettings, openNeonStore } from '../../db/drivers/open-neon-store.ts';
import type { Store } from '../../db/store.ts';
import { EdgeConfigError } from '../edge-config.ts';

/** The bindings the choice reads (a slice of WorkerEnv). */
export interface WorkerStoreBindings {
  /** `[[hyperdrive]]` in wrangler.toml; locally, its `localConnectionString` (docs/workers.md). */
  readonly HYPERDRIVE?: HyperdriveLike;
  /** Secret: the Neon (or any Postgres behind a WebSocket proxy) connection string. */
  readonly DATABASE_URL?: string;
  /** Local development and tests only: `host:port` of a WebSocket-to-TCP tunnel in front of Postgres. */
  readonly NEON_DEV_WS_PROXY?: string;
}

export const workerStoreKinds = ['hyperdrive', 'neon'] as const;
export type WorkerStoreKind = (typeof workerStoreKinds)[number];

export interface WorkerStore {
  readonly kind: WorkerStoreKind;
  /** A fresh store, to be closed by the caller when its request or batch is done. */
  readonly open: () => Promise<Store>;
}

/** Throws EdgeConfigError naming both ways to configure a store when neither is usable. */
export function workerStore(env: WorkerStoreBindings): WorkerStore {
  const hyperdrive = env.HYPERDRIVE;
  if (hyperdrive !== undefined) {
    // A binding of another kind under this name (a var, a KV namespace) has no string here.
    const connectionString: unknown = (hyperdrive as { connectionString?: unknown }).connectionString;
    if (typeof connectionString !== 'string' || connectionString === '') {
      throw new EdgeConfigError([
        'HYPERDRIVE must be a Hyperdrive binding ([[hyperdrive]] in wrangler.toml), but it has no connectionString',
      ]);
    }
    return { kind: 'hyperdrive', open: () => openHyperdriveStore({ hyperdrive }) };
  }
  const databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    const neon = neonSettings(env.NEON_DEV_WS_PROXY);
    return {
      kind: 'neon',
      open: () => openNeonStore({ url: databaseUrl, ...(neon ? { neon } : {}) }),
    };
  }
  throw new EdgeConfigError([
    'no store: add a HYPERDRIVE binding ([[hyperdrive]] in wrangler.toml, see docs/workers.md) or set DATABASE_URL (wrangler secret put DATABASE_URL)',
  ]);
}

/** Neon's defaults suit its hosted proxy; a local tunnel needs plain ws:// and no pipelining. */
function neonSettings(tunnel: string | undefined): NeonSettings | undefined {
  if (!tunnel) return undefined;
  return {
    wsProxy: (host, port) => `${tunnel}/v2?address=${host}:${port}`,
    useSecureWebSocket: false,
    pipelineTLS: false,
    pipelineConnect: false,
  };
}
