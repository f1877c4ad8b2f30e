// How the app gets a store: the Worker opens a Neon pool per request (a pool must not outlive the
// request that made it), Node hands out its one long-lived store. Routes see only the Store.
import type { Store } from '../db/store.ts';

export interface StoreHandle {
  readonly store: Store;
  /** Done with the store: closes a per-request pool, does nothing for a shared store. */
  release(): Promise<void>;
}

export interface StoreProvider {
  open(): Promise<StoreHandle>;
}

/** One store for every request (Node): release is a no-op; the owner closes it. */
export function sharedStoreProvider(store: Store): StoreProvider {
  const handle: StoreHandle = { store, release: async () => {} };
  return { open: async () => handle };
}

/** A fresh store per call, closed on release (Workers: a Neon pool per request or queue batch). */
export function perUseStoreProvider(openStore: () => Promise<Store>): StoreProvider {
  return {
    async open() {
      const store = await openStore();
      return { store, release: () => store.close() };
    },
  };
}
