// The Hono environment every route and middleware shares: context variables, typed once.
import type { Store } from '../db/store.ts';
import type { ApiScope } from '../protocol/api-scope.ts';
import type { TrajectoryCredential } from '../protocol/trajectory-key.ts';

export interface EdgeVariables {
  /** The store for this request (see store-provider.ts). */
  store: Store;
  /**
   * Keeps the request's store open after the handler returns (a streamed response still using it);
   * call the returned function when done. Released stores close after the last hold lets go.
   */
  keepStore: () => () => void;
  /** The scopes of the request's API key (set by bearerAuth; requireScope checks them). */
  scopes: readonly ApiScope[];
  /**
   * The trajectory key of a /t/<key>/ request (routes/trajectory-url.ts): on those paths it is the
   * credential, and the only trajectory the request may write. Unset on /v1.
   */
  trajectoryCredential?: TrajectoryCredential;
}

export interface EdgeEnv {
  Variables: EdgeVariables;
}
