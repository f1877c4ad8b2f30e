// The Hono environment every route and middleware shares: context variables, typed once.
import type { Store } from '../db/store.ts';

export interface EdgeVariables {
  /** The store for this request (see store-provider.ts). */
  store: Store;
  /**
   * Keeps the request's store open after the handler returns (a streamed response still using it);
   * call the returned function when done. Released stores close after the last hold lets go.
   */
  keepStore: () => () => void;
}

export interface EdgeEnv {
  Variables: EdgeVariables;
}
