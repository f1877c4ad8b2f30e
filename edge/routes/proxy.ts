// POST /v1/chat/completions and POST /v1/responses: the OpenAI-compatible recording proxy. Point an
// agent's base URL at the trajectory's baseURL (/t/<key>/v1, from POST /v1/trajectories), or at /v1
// with the trajectory key in `x-edgerl-trajectory`; every call is forwarded to the inference endpoint
// and recorded as turns of that trajectory. Only a client trajectory, with its key, is written here
// (docs/edge.md, "Who writes a trajectory"): a rollout's or an upload's is refused before the
// upstream is called.
import { type Context, Hono } from 'hono';
import { responsesRequestSchema } from '../../protocol/openai/responses/responses-request.ts';
import type { EdgeEnv } from '../app-env.ts';
import { trajectoryCredential, trajectoryHeader } from '../http/trajectory-credential.ts';
import { parseBody } from '../http/parse-body.ts';
import { bodyLimit } from '../middleware/body-limit.ts';
import { proxyRequestSchema } from '../proxy/proxy-request.ts';
import {
  type ProxyContext,
  type ProxyResult,
  recordChatCompletion,
} from '../proxy/record-chat-completion.ts';
import { recordResponse } from '../proxy/record-response.ts';
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
  const contextOf = (c: Context<EdgeEnv>): ProxyContext => ({
    store: c.var.store,
    upstream: deps.fleet
      ? { ...deps.upstream, fleet: fleetFetch(deps.fleet.forStore(c.var.store), deps.upstream.fetch) }
      : deps.upstream,
    keepStore: c.var.keepStore,
    ...(deps.logError ? { logError: deps.logError } : {}),
    ...(deps.heads ? { heads: deps.heads } : {}),
    ...(deps.routes ? { routes: deps.routes } : {}),
  });
  const callOf = (c: Context<EdgeEnv>) => {
    const { trajectoryId, keyDigest } = trajectoryCredential(c, true);
    const policy = c.req.header(policyHeader);
    return {
      trajectoryId,
      ...(keyDigest !== undefined ? { keyDigest } : {}),
      ...(policy ? { policy } : {}),
      signal: c.req.raw.signal,
    };
  };
  return (
    new Hono<EdgeEnv>()
      .post('/chat/completions', bodyLimit(deps.maxBodyBytes), async (c) => {
        const call = callOf(c);
        const request = await parseBody(c, proxyRequestSchema);
        return respond(call.trajectoryId, await recordChatCompletion(contextOf(c), { ...call, request }));
      })
      // OpenAI's Responses API, recorded as the chat call it translates to (record-response.ts).
      .post('/responses', bodyLimit(deps.maxBodyBytes), async (c) => {
        const call = callOf(c);
        const request = await parseBody(c, responsesRequestSchema);
        return respond(call.trajectoryId, await recordResponse(contextOf(c), { ...call, request }));
      })
  );
}

function respond(trajectoryId: string, result: ProxyResult): Response {
  const headers: Record<string, string> = {
    'content-type': result.contentType,
    [trajectoryHeader]: trajectoryId,
    'x-edgerl-model': result.model,
  };
  if (result.turnIndex !== undefined) headers['x-edgerl-turn-index'] = String(result.turnIndex);
  if (typeof result.body !== 'string') headers['cache-control'] = 'no-cache';
  return new Response(result.body, { status: result.status, headers });
}
