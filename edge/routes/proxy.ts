// POST /v1/chat/completions: the OpenAI-compatible recording proxy. Point an agent's base URL at the
// trajectory's baseURL (/t/<key>/v1, from POST /v1/trajectories), or at /v1 with the trajectory key in
// `x-edgerl-trajectory`; every call is forwarded to the inference endpoint and recorded as turns of
// that trajectory. Only a client trajectory, with its key, is written here (docs/edge.md, "Who writes
// a trajectory"): a rollout's or an upload's is refused before the upstream is called.
import { Hono } from 'hono';
import type { EdgeEnv } from '../app-env.ts';
import { trajectoryCredential, trajectoryHeader } from '../http/trajectory-credential.ts';
import { parseBody } from '../http/parse-body.ts';
import { bodyLimit } from '../middleware/body-limit.ts';
import { proxyRequestSchema } from '../proxy/proxy-request.ts';
import { recordChatCompletion } from '../proxy/record-chat-completion.ts';
import type { TrajectoryHeads } from '../proxy/trajectory-heads.ts';
import type { UpstreamEndpoint } from '../proxy/upstream.ts';
import { fleetFetch } from '../routing/fleet-fetch.ts';
import type { ReplicaRouter } from '../routing/replica-router.ts';
import type { RouteCache } from '../routing/route-cache.ts';

export interface ProxyRouteDeps {
  readonly upstream: UpstreamEndpoint;
  /** The inference fleet, when there is one: each call goes to a replica holding its model. */
  readonly fleet?: ReplicaRouter;
  readonly maxBodyBytes: number;
  readonly logError?: (error: unknown) => void;
  /** The app's heads of the trajectories it proxies and its route table (one of each per app). */
  readonly heads?: TrajectoryHeads;
  readonly routes?: RouteCache;
}

export { trajectoryHeader };
export const policyHeader = 'x-edgerl-policy';

export function proxyRoutes(deps: ProxyRouteDeps) {
  return new Hono<EdgeEnv>().post('/chat/completions', bodyLimit(deps.maxBodyBytes), async (c) => {
    const { trajectoryId, keyDigest } = trajectoryCredential(c, true);
    const request = await parseBody(c, proxyRequestSchema);
    const policy = c.req.header(policyHeader);
    const result = await recordChatCompletion(
      {
        store: c.var.store,
        upstream: deps.fleet
          ? { ...deps.upstream, fleet: fleetFetch(deps.fleet.forStore(c.var.store), deps.upstream.fetch) }
          : deps.upstream,
        keepStore: c.var.keepStore,
        ...(deps.logError ? { logError: deps.logError } : {}),
        ...(deps.heads ? { heads: deps.heads } : {}),
        ...(deps.routes ? { routes: deps.routes } : {}),
      },
      {
        trajectoryId,
        ...(keyDigest !== undefined ? { keyDigest } : {}),
        request,
        ...(policy ? { policy } : {}),
        signal: c.req.raw.signal,
      },
    );
    const headers: Record<string, string> = {
      'content-type': result.contentType,
      [trajectoryHeader]: trajectoryId,
      'x-edgerl-model': result.model,
    };
    if (result.turnIndex !== undefined) headers['x-edgerl-turn-index'] = String(result.turnIndex);
    if (typeof result.body !== 'string') headers['cache-control'] = 'no-cache';
    return new Response(result.body, { status: result.status, headers });
  });
}
