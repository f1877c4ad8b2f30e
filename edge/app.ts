// The edge's Hono app, one for both runtimes: the Worker (edge/runtime/worker.ts) and Node (edge/runtime/node.ts)
// build it with their own store provider and episode dispatcher. Every /v1 route needs a bearer API
// key and gets a store; errors become JSON in the one onError below. The web console (console/) is
// mounted at /console behind the same keys: a browser signs in with one and gets a session cookie.
import { Hono } from 'hono';
import { createConsoleApp } from '../console/console-app.ts';
import type { EdgeEnv } from './app-env.ts';
import type { CapabilityName } from './environments/capabilities.ts';
import type { Environment } from './environments/environment.ts';
import { ApiError } from './http/api-error.ts';
import { errorResponse } from './http/error-response.ts';
import { bearerAuth } from './middleware/bearer-auth.ts';
import { withStore } from './middleware/with-store.ts';
import { TrajectoryHeads } from './proxy/trajectory-heads.ts';
import type { UpstreamEndpoint } from './proxy/upstream.ts';
import { RouteCache, routeCacheMs } from './routing/route-cache.ts';
import type { EpisodeDispatcher } from './rollouts/episode-message.ts';
import type { ReplicaRouter } from './routing/replica-router.ts';
import { groupRoutes } from './routes/groups.ts';
import { proxyRoutes } from './routes/proxy.ts';
import { episodeLeaseDefaults } from './rollouts/episode-leases.ts';
import { rolloutRoutes } from './routes/rollouts.ts';
import { trajectoryRoutes } from './routes/trajectories.ts';
import type { StoreProvider } from './store-provider.ts';

export interface EdgeLimits {
  /** Largest POST /v1/rollouts body, in bytes. */
  readonly rolloutBodyBytes: number;
  /** Largest proxied chat request, in bytes: whole conversations with tool output travel each call. */
  readonly proxyBodyBytes: number;
  /** Largest trajectory start / finish body, in bytes. */
  readonly trajectoryBodyBytes: number;
  /** Largest POST /v1/trajectories body that carries whole episodes with their turns, in bytes. */
  readonly ingestBodyBytes: number;
  /** How often an event stream polls the store for new turns, in milliseconds. */
  readonly ssePollMs: number;
  /** Longest event stream before the client is asked to reconnect, in milliseconds. */
  readonly sseMaxMs: number;
}

export const defaultLimits: EdgeLimits = {
  rolloutBodyBytes: 64 * 1024,
  // OpenAI's own request limit is far larger; 8 MiB covers long agent conversations with tool output.
  proxyBodyBytes: 8 * 1024 * 1024,
  trajectoryBodyBytes: 256 * 1024,
  // As for the proxy: a batch of recorded episodes is a few long conversations' worth; clients batch more.
  ingestBodyBytes: 8 * 1024 * 1024,
  // A quarter second keeps a live view fluid at one cheap indexed query per poll.
  ssePollMs: 250,
  // Well under the time proxies and load balancers allow an idle-looking response.
  sseMaxMs: 10 * 60 * 1000,
};

export interface EdgeDeps {
  readonly stores: StoreProvider;
  readonly environments: Readonly<Record<string, Environment>>;
  readonly dispatcher: EpisodeDispatcher;
  /** The inference endpoint the proxy forwards to. */
  readonly upstream: UpstreamEndpoint;
  /**
   * The inference fleet (INFERENCE_REPLICAS): routes refuse a version no replica holds, and the proxy
   * sends each call to a replica holding its model.
   */
  readonly fleet?: ReplicaRouter;
  /** Bearer keys accepted on /v1 (at least one). */
  readonly apiKeys: readonly string[];
  /** The model requests get when they name no policy or experiment. */
  readonly defaultModel?: string;
  readonly limits?: Partial<EdgeLimits>;
  /**
   * Capabilities the episode runner behind this app provides; POST /v1/rollouts refuses (400) an
   * environment needing another. Absent: not checked (the episode then fails its setup instead).
   */
  readonly provides?: readonly CapabilityName[];
  /** Episode leases (seconds); default episodeLeaseDefaults'. */
  readonly episodeLeaseSeconds?: number;
  /** Server errors (5xx) go here with their cause; default console.error. */
  readonly logError?: (error: unknown, request: Request) => void;
  /**
   * How long a policy or version name's route is reused (route-cache.ts): the bound on how late a
   * promote, rollback or retirement reaches this edge. Default routeCacheMs; 0 reads it every time.
   */
  readonly routeCacheMs?: number;
}

export function createApp(deps: EdgeDeps) {
  const limits: EdgeLimits = { ...defaultLimits, ...deps.limits };
  const logError = deps.logError ?? ((error: unknown) => console.error('edgerl edge:', error));
  // One of each per app (per isolate in a Worker): what the proxy and the router keep between requests.
  const heads = new TrajectoryHeads();
  const routes = new RouteCache(deps.routeCacheMs ?? routeCacheMs);
  const v1 = new Hono<EdgeEnv>()
    .use(bearerAuth({ keys: deps.apiKeys }))
    .use(withStore(deps.stores))
    .route(
      '/rollouts',
      rolloutRoutes({
        environments: deps.environments,
        dispatcher: deps.dispatcher,
        defaultModel: deps.defaultModel,
        ...(deps.fleet ? { fleet: deps.fleet } : {}),
        maxBodyBytes: limits.rolloutBodyBytes,
        ...(deps.provides ? { provides: deps.provides } : {}),
        leaseSeconds: deps.episodeLeaseSeconds ?? episodeLeaseDefaults.leaseSeconds,
        routes,
      }),
    )
    .route(
      '/groups',
      groupRoutes({
        environments: deps.environments,
        defaultModel: deps.defaultModel,
        ...(deps.fleet ? { fleet: deps.fleet } : {}),
        maxBodyBytes: limits.rolloutBodyBytes,
        routes,
      }),
    )
    .route(
      '/trajectories',
      trajectoryRoutes({
        defaultModel: deps.defaultModel,
        ...(deps.fleet ? { fleet: deps.fleet } : {}),
        maxBodyBytes: limits.trajectoryBodyBytes,
        maxIngestBytes: limits.ingestBodyBytes,
        pollMs: limits.ssePollMs,
        maxStreamMs: limits.sseMaxMs,
        heads,
        routes,
      }),
    )
    .route(
      '/',
      proxyRoutes({
        upstream: deps.upstream,
        ...(deps.fleet ? { fleet: deps.fleet } : {}),
        maxBodyBytes: limits.proxyBodyBytes,
        logError: (error) => logError(error, new Request('http://edge/v1/chat/completions')),
        heads,
        routes,
      }),
    );

  const app = new Hono<EdgeEnv>()
    .get('/health', (c) => c.json({ ok: true, service: 'edgerl-edge' }))
    .route('/v1', v1)
    .get('/console/', (c) => c.redirect('/console', 302))
    .route(
      '/console',
      createConsoleApp({
        stores: deps.stores,
        access: { kind: 'keys', keys: deps.apiKeys },
        basePath: '/console',
        ...(deps.fleet ? { fleet: deps.fleet.replicas } : {}),
        logError: (error) => logError(error, new Request('http://edge/console')),
      }),
    );
  app.notFound((c) => {
    const error = new ApiError('not-found', `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
    return c.json(errorResponse(error).body, 404);
  });
  app.onError((error, c) => {
    const response = errorResponse(error);
    if (response.log) logError(error, c.req.raw);
    return c.json(response.body, response.status as 400);
  });
  return app;
}

export type EdgeApp = ReturnType<typeof createApp>;
