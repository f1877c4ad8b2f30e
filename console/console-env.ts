// What the console needs from whoever mounts it (the edge app, `edgerl console`), and the Hono
// environment its routes share. Stores come the way the edge hands them out (a pool per request on
// Workers, one store in Node), so the console works under both without knowing which.
import type { Context } from 'hono';
import type { Store } from '../db/store.ts';
import type { GuessLimiter } from '../protocol/guess-limiter.ts';
import type { KeyRing } from '../protocol/key-ring.ts';

export interface ConsoleStoreHandle {
  readonly store: Store;
  release(): Promise<void>;
}

/** The edge's StoreProvider has this shape (edge/store-provider.ts). */
export interface ConsoleStores {
  open(): Promise<ConsoleStoreHandle>;
}

/**
 * Who may use the console. `keys`: a browser signs in once with one of the ring's keys that holds the
 * admin scope and gets a session cookie (scripts may send `Authorization: Bearer KEY`); the ring's
 * other keys are refused with 403 naming the scope. `loopback`: nobody signs in, and only requests
 * addressed to localhost are answered (`edgerl console` on this machine without a key).
 */
export type ConsoleAccess = { readonly kind: 'keys'; readonly keys: KeyRing } | { readonly kind: 'loopback' };

export interface ConsoleDeps {
  readonly stores: ConsoleStores;
  readonly access: ConsoleAccess;
  /** Where the console is mounted, without a trailing slash (default `/console`). */
  readonly basePath?: string;
  /** The inference replicas requests are routed to, when known: promote and rollback need the version ready on one (as the CLI's INFERENCE_REPLICAS). */
  readonly fleet?: readonly string[];
  /** Each token's text, when a tokenizer is at hand (`edgerl console --model DIR`); token ids are shown otherwise. */
  readonly tokenText?: (ids: readonly number[]) => readonly string[];
  /** How often a running group's page polls for new turns, in milliseconds (default 1000). */
  readonly pollMs?: number;
  /** Server errors go here; default console.error. */
  readonly logError?: (error: unknown) => void;
  /** The clock, for session expiry (tests). */
  readonly now?: () => number;
  /**
   * Counts wrong keys per client (sign-in and bearer); the edge shares its own so guesses on /v1 and
   * /console add up. Default: one of this app's own.
   */
  readonly limiter?: GuessLimiter;
  /** The request's client address for the limiter; default "unknown" (every client counted as one). */
  readonly clientAddress?: (c: Context) => string;
}

/** How the request was let in: its CSRF token when it came with ambient credentials (a cookie, or none at all). */
export type ConsoleSession =
  | { readonly kind: 'bearer' }
  | { readonly kind: 'cookie'; readonly csrf: string }
  | { readonly kind: 'loopback'; readonly csrf: string };

export interface ConsoleEnv {
  Variables: {
    store: Store;
    session: ConsoleSession;
  };
}
