// POST /v1/rollouts: start a group of episodes; 202 with the group id at once, the episodes run
// through the dispatcher (a Cloudflare Queue on Workers, the in-process queue in Node).
import { Hono } from 'hono';
import type { EdgeEnv } from '../app-env.ts';
import type { CapabilityName } from '../environments/capabilities.ts';
import type { Environment } from '../environments/environment.ts';
import { parseBody } from '../http/parse-body.ts';
import { refuseWhenFull } from '../http/refuse-when-full.ts';
import type { AdmissionLimits, EdgeBacklog } from '../rollouts/admit-episodes.ts';
import { bodyLimit } from '../middleware/body-limit.ts';
import type { EpisodeDispatcher } from '../rollouts/episode-message.ts';
import { rolloutRequestSchema, startRollout } from '../rollouts/start-rollout.ts';
import type { ReplicaRouter } from '../routing/replica-router.ts';
import type { RouteCache } from '../routing/route-cache.ts';

export interface RolloutRouteDeps {
  readonly environments: Readonly<Record<string, Environment>>;
  readonly dispatcher: EpisodeDispatcher;
  readonly defaultModel: string | undefined;
  readonly fleet?: ReplicaRouter;
  readonly maxBodyBytes: number;
  readonly provides?: readonly CapabilityName[];
  /** The episode lease, which a queued slot waits for its first runner. */
  readonly leaseSeconds: number;
  readonly routes?: RouteCache;
  /** Admission bounds and this edge's queue (start-rollout.ts); absent: every group is admitted. */
  readonly admission?: { readonly limits: AdmissionLimits; readonly backlog?: () => EdgeBacklog };
}

export function rolloutRoutes(deps: RolloutRouteDeps) {
  return new Hono<EdgeEnv>().post('/', bodyLimit(deps.maxBodyBytes), async (c) => {
    const request = await parseBody(c, rolloutRequestSchema);
    const started = await refuseWhenFull(c, () =>
      startRollout(
        {
          store: c.var.store,
          environments: deps.environments,
          dispatcher: deps.dispatcher,
          defaultModel: deps.defaultModel,
          ...(deps.fleet ? { fleet: deps.fleet } : {}),
          ...(deps.provides ? { provides: deps.provides } : {}),
          awaitRunnerSeconds: deps.leaseSeconds,
          ...(deps.routes ? { routes: deps.routes } : {}),
          ...(deps.admission ? { admission: deps.admission } : {}),
        },
        request,
      ),
    );
    c.header('Location', `/v1/groups/${started.groupId}`);
    return c.json(started, 202);
  });
}
