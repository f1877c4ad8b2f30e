// Routes declare the scope they need (protocol/api-scope.ts); a key without it gets 403 naming the
// scope, never the key. Runs after bearerAuth, which sets the key's scopes. A resource the table does
// not name needs `admin`: a route added later is closed until someone decides who may call it.
import type { MiddlewareHandler } from 'hono';
import { type ApiScope, allowsScope } from '../../protocol/api-scope.ts';
import type { EdgeEnv } from '../app-env.ts';
import { ApiError } from '../http/api-error.ts';

/** The scope each resource (the first path segment under `mount`) needs; others need admin. */
export function requireScope(
  mount: string,
  byResource: Readonly<Record<string, ApiScope>>,
): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    const rest = c.req.path.startsWith(`${mount}/`) ? c.req.path.slice(mount.length + 1) : '';
    const resource = rest.split('/', 1)[0] ?? '';
    const needed = Object.hasOwn(byResource, resource) ? (byResource[resource] as ApiScope) : 'admin';
    if (!allowsScope(c.var.scopes ?? [], needed)) {
      throw new ApiError(
        'forbidden',
        `this API key lacks the "${needed}" scope this route needs (EDGERL_EDGE_API_KEYS hold every scope; docs/edge.md, "API keys and scopes")`,
      );
    }
    await next();
  };
}
