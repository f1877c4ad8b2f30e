// The model a proxied chat completion is sent with. Routing is resolveRoute's rule (routeNamed, with
// its retired-version check); this only says which name the proxy routes by. Recording is the proxy's.
import type { Store } from '../../db/store.ts';
import { invalidField } from '../http/api-error.ts';
import { routeNamed } from './resolve-route.ts';
import type { RouteCache } from './route-cache.ts';
import type { Route } from './route.ts';

export interface ProxyModelRequest {
  /** `x-edgerl-policy`, when the client sent it. */
  readonly policy?: string;
  /** The request body's `model`. */
  readonly requested: string;
}

/**
 * The route the trajectory recorded when it started (`recorded`, read from its row); else the policy the header names (or the
 * request's own model) when the store knows it as a policy or version; else the request's model as is.
 */
export async function proxyModel(
  store: Store,
  recorded: Route | undefined,
  request: ProxyModelRequest,
  routes?: RouteCache,
): Promise<string> {
  if (recorded) return recorded.model;
  if (request.policy !== undefined) {
    const route = await routeNamed(store, request.policy, 'x-edgerl-policy', '', routes);
    if (!route) throw invalidField('x-edgerl-policy', `no policy or version is named "${request.policy}"`);
    return route.model;
  }
  return (await routeNamed(store, request.requested, 'model', '', routes))?.model ?? request.requested;
}
