// Opens the store from a Worker through a Hyperdrive binding: node-postgres on the binding's
// connectionString. pg (≥ 8.16.3, pinned 8.23) sees workerd (navigator.userAgent is
// 'Cloudflare-Workers') and connects through pg-cloudflare's `cloudflare:sockets` instead of
// node:net (node_modules/pg/lib/stream.js). Leaves out Neon (open-neon-store.ts) and Node's drivers.
//
// Lifetime: open one per request or queue batch and close it in waitUntil. Cloudflare's
// node-postgres guide creates a new client on each request because Hyperdrive keeps the pool to
// the database itself, so connecting is cheap
// (developers.cloudflare.com/hyperdrive/examples/connect-to-postgres/postgres-drivers-and-libraries/node-postgres/);
// a socket must not outlive the request that opened it. Here the per-request client is a small pg
// Pool rather than one Client, because a queue batch runs several episodes at once, each with its
// own transactions, and one Client would run them on one connection. The Hyperdrive itself is made
// with query caching off: the edge reads back what it has just written (docs/workers.md).
import { type MigrationMode, prepareSchema } from '../migrate.ts';
import { nodePostgresStore } from './node-postgres-store.ts';
import type { Store } from '../store.ts';
import { storeLocation } from './store-location.ts';

/**
 * Connections per store. Workers allow six simultaneous outgoing connections per invocation
 * (developers.cloudflare.com/workers/platform/limits/#simultaneous-open-connections), and Cloudflare's
 * Hyperdrive guides cap a driver's pool at 5 for that reason, which leaves one for the policy call.
 */
export const hyperdriveMaxConnections = 5;

/** The part of Workers' `Hyperdrive` binding this file reads (@cloudflare/workers-types' Hyperdrive). */
export interface HyperdriveLike {
  /** `postgresql://user:password@<id>.hyperdrive.local:5432/db`, made by the runtime per isolate. */
  readonly connectionString: string;
}

export interface OpenHyperdriveStoreOptions {
  readonly hyperdrive: HyperdriveLike;
  /** Default `skip`: a Worker opening a store per request should not query migrations each time. */
  readonly migrations?: MigrationMode;
  readonly maxConnections?: number;
}

export async function openHyperdriveStore(options: OpenHyperdriveStoreOptions): Promise<Store> {
  const url = options.hyperdrive.connectionString;
  // Hyperdrive also fronts MySQL; the store is Postgres only.
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new Error(
      'the HYPERDRIVE binding must give a postgres:// connection string (a PostgreSQL Hyperdrive)',
    );
  }
  const location = storeLocation(url, '');
  if (location.kind !== 'server') throw new Error('unreachable: a postgres:// URL is a server location');
  const store = nodePostgresStore({
    url: location.url,
    maxConnections: options.maxConnections ?? hyperdriveMaxConnections,
  });
  try {
    await prepareSchema(store.db, options.migrations ?? 'skip', store.target);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
