// The edge's Hono app, one for both runtimes: the Worker (edge/runtime/worker.ts) and Node (edge/runtime/node.ts)
// build it with their own store provider and episode dispatcher. Every /v1 route needs a bearer API
// key with the route's scope and gets a store; errors become JSON in the one onError below. The web
// console (console/) is mounted at /console behind the admin keys: a browser signs in with one and
// gets a session cookie. One guess limiter counts wrong keys on both.
import { type Context, Hono } from 'hono';
import { createConsoleApp } from '../console/console-app.ts';
import { GuessLimiter } from '../protocol/guess-limiter.ts';
import { KeyRing } from '../protocol/key-ring.ts';
import type { EdgeEnv } from './app-env.ts';
import type { CapabilityName } from './environments/capabilities.ts';
import type { Environment } from './environments/environment.ts';
import { ApiError } from './http/api-error.ts';
import { errorResponse, mayRetry } from './http/error-response.ts';
import { errorSurface } from './http/error-surface.ts';
import { serverErrorLine } from './http/server-error-line.ts';
import { bearerAuth } from './middleware/bearer-auth.ts';
import { requireScope } from './middleware/require-scope.ts';
import { withStore } from './middleware/with-store.ts';
import { TrajectoryHeads } from './proxy/trajectory-heads.ts';
import type { UpstreamEndpoint } from './proxy/upstream.ts';
import { RouteCache, routeCacheMs } from './routing/route-cache.ts';
import type { EpisodeDispatcher } from './rollouts/episode-message.ts';
import type { ReplicaRouter } from './routing/replica-router.ts';
import { groupRoutes } from './routes/groups.ts';
import { modelsRoutes } from './routes/models.ts';
import { proxyRoutes } from './routes/proxy.ts';
import { episodeLeaseDefaults } from './rollouts/episode-leases.ts';
import { rolloutRoutes } from './routes/rollouts.ts';
import { trajectoryRoutes } from './routes/trajectories.ts';
import { maskTrajectoryUrl, trajectoryUrlRoutes } from './routes/trajectory-url.ts';
import type { StoreProvider } from './store-provider.ts';
import type { EdgeBacklog } from './rollouts/admit-episodes.ts';
import { defaultLimits, type EdgeLimits } from './edge-limits.ts';

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
  /** Bearer keys with every scope, on /v1 and the console (at least one key in all). */
  readonly apiKeys: readonly string[];
  /** Keys with the record scope only; and with the rollout scope (protocol/api-scope.ts). */
  readonly recordKeys?: readonly string[];
  readonly rolloutKeys?: readonly string[];
  /** Counts wrong keys per client on /v1 and the console alike; default one of this app's own. */
  readonly limiter?: GuessLimiter;
  /** The request's client address for the limiter (the runtime's: socket peer, cf-connecting-ip); default "unknown". */
  readonly clientAddress?: (c: Context) => string;
  /** The model requests get when they name no policy or experiment. */
  readonly defaultModel?: string;
  readonly limits?: Partial<EdgeLimits>;
  /** This edge's episode queue, for admission (Node's in-process queue); absent in a Worker. */
  readonly backlog?: () => EdgeBacklog;
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
  // Expected 5xx (store unavailable) as one line, a bug with its stack (server-error-line.ts).
  const logError =
    deps.logError ?? ((error: unknown) => console.error(`edgerl edge: ${serverErrorLine(error)}`));
  // One of each per app (per isolate in a Worker): what the proxy and the router keep between requests.
  const admission = {
    limits: { maxQueuedPerEdge: limits.maxQueuedPerEdge, maxQueuedPerPolicy: limits.maxQueuedPerPolicy },
    ...(deps.backlog ? { backlog: deps.backlog } : {}),
  };
  const heads = new TrajectoryHeads();
  const routes = new RouteCache(deps.routeCacheMs ?? routeCacheMs);
  const keys = new KeyRing({
    admin: deps.apiKeys,
    rollout: deps.rolloutKeys ?? [],
    record: deps.recordKeys ?? [],
  });
  const limiter = deps.limiter ?? new GuessLimiter();
  const clientAddress = deps.clientAddress ?? (() => 'unknown');
  // One proxy, served on /v1 (API key, trajectory key in a header) and under the trajectory URL.
  const proxy = proxyRoutes({
    upstream: deps.upstream,
    ...(deps.fleet ? { fleet: deps.fleet } : {}),
    maxBodyBytes: limits.proxyBodyBytes,
    logError: (error) => logError(error, new Request('http://edge/v1/chat/completions')),
    heads,
    routes,
  });
  // GET /v1/models, on /v1 and under the trajectory URL as the proxy is (routes/models.ts).
  const models = modelsRoutes({ ...(deps.defaultModel ? { defaultModel: deps.defaultModel } : {}) });
  const v1 = new Hono<EdgeEnv>()
    .use(bearerAuth({ keys, limiter, clientAddress }))
    // Each resource's scope (docs/edge.md, "API keys and scopes"); a resource not named needs admin.
    .use(
      requireScope('/v1', {
        rollouts: 'rollout',
        groups: 'rollout',
        trajectories: 'record',
        chat: 'record',
        responses: 'record',
        models: 'record',
      }),
    )
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
        admission,
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
        admission,
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
    .route('/', proxy)
    .route('/', models);

  const app = new Hono<EdgeEnv>()
    .get('/health', (c) => c.json({ ok: true, service: 'edgerl-edge' }))
    .route('/v1', v1)
    // The trajectory URL (docs/edge.md, "Who writes a trajectory"): its key is its credential, so it
    // sits outside the bearer-key middleware. What it serves under /v1, one line each.
    .route(
      '/t/:key',
      trajectoryUrlRoutes({
        stores: deps.stores,
        v1: [proxy, models],
        maxBodyBytes: limits.trajectoryBodyBytes,
        heads,
      }),
    )
    .get('/console/', (c) => c.redirect('/console', 302))
    .route(
      '/console',
      createConsoleApp({
        stores: deps.stores,
        access: { kind: 'keys', keys },
        limiter,
        clientAddress,
        basePath: '/console',
        ...(deps.fleet ? { fleet: deps.fleet.replicas } : {}),
        logError: (error) => logError(error, new Request('http://edge/console')),
      }),
    );
  app.notFound((c) => {
    const path = maskTrajectoryUrl(new URL(c.req.url).pathname);
    const error = new ApiError('not-found', `no route for ${c.req.method} ${path}`);
    return c.json(errorResponse(error).body, 404);
  });
  app.onError((error, c) => {
    // OpenAI SDKs' routes answer permanent refusals with a status they do not retry (error-response.ts).
    const response = errorResponse(error, errorSurface(c.req.path));
    // A trajectory URL's key is a credential: logged with it masked.
    if (response.log) logError(error, loggedRequest(c.req.raw));
    c.header('x-should-retry', String(mayRetry(response.status)));
    return c.json(response.body, response.status as 400);
  });
  return app;
}

export type EdgeApp = ReturnType<typeof createApp>;

/** The request as logs may see it: a /t/<key>/ path with its key masked. */
function loggedRequest(request: Request): Request {
  const url = new URL(request.url);
  const masked = maskTrajectoryUrl(url.pathname);
  if (masked === url.pathname) return request;
  url.pathname = masked;
  return new Request(url, { method: request.method });
}
