// The Hono environment every route and middleware shares: context variables, typed once.
import type { Store } from '../db/store.ts';

export interface EdgeVariables {
  /** The store for this request (see store-provider.ts). */
  store: Store;
}

export interface EdgeEnv {
  Variables: EdgeVariables;
}
