// GET /v1/groups (newest first, by status), GET /v1/groups/:id (the group, its trajectories and a
// progress count; `?turns=true` adds every trajectory's turns), and POST /v1/groups: an empty group
// for outside agents, who join it with POST /v1/trajectories {groupId} and record through the proxy.
import { Hono } from 'hono';
import { z } from 'zod';
import { groupStatuses, trajectoryStatuses, type TrajectoryStatus } from '../../protocol/statuses.ts';
import type { EdgeEnv } from '../app-env.ts';
import type { Environment } from '../environments/environment.ts';
import { parseBody, parseValue } from '../http/parse-body.ts';
import { refuseWhenFull } from '../http/refuse-when-full.ts';
import type { AdmissionLimits, EdgeBacklog } from '../rollouts/admit-episodes.ts';
import { bodyLimit } from '../middleware/body-limit.ts';
import { createRolloutGroup, rolloutRequestSchema } from '../rollouts/start-rollout.ts';
import type { ReplicaRouter } from '../routing/replica-router.ts';
import type { RouteCache } from '../routing/route-cache.ts';

export interface GroupRouteDeps {
  readonly environments: Readonly<Record<string, Environment>>;
  readonly defaultModel: string | undefined;
  readonly fleet?: ReplicaRouter;
  readonly maxBodyBytes: number;
  readonly routes?: RouteCache;
  /** Admission bounds (start-rollout.ts): a new group is refused while its policy is past its bound. */
  readonly admission?: { readonly limits: AdmissionLimits; readonly backlog?: () => EdgeBacklog };
}

const idParam = z.object({ id: z.uuid() });
const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');
const getQuery = z.object({ turns: flag.optional() });
const listQuery = z.object({
  status: z
    .string()
    .transform((value) => value.split(','))
    .pipe(z.array(z.enum(groupStatuses)))
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});

export function groupRoutes(deps: GroupRouteDeps) {
  return new Hono<EdgeEnv>()
    .post('/', bodyLimit(deps.maxBodyBytes), async (c) => {
      const request = await parseBody(c, rolloutRequestSchema);
      const { group, taskRow, task, route } = await refuseWhenFull(c, () =>
        createRolloutGroup(
          {
            store: c.var.store,
            environments: deps.environments,
            defaultModel: deps.defaultModel,
            ...(deps.fleet ? { fleet: deps.fleet } : {}),
            ...(deps.routes ? { routes: deps.routes } : {}),
            ...(deps.admission ? { admission: deps.admission } : {}),
          },
          request,
        ),
      );
      c.header('Location', `/v1/groups/${group.id}`);
      return c.json(
        {
          groupId: group.id,
          taskId: taskRow.id,
          taskKey: taskRow.key,
          // What the agent works on: the environment's task, prompt included.
          task,
          model: route.model,
          arm: route.armName ?? null,
        },
        201,
      );
    })
    .get('/', async (c) => {
      const query = parseValue(listQuery, c.req.query(), 'query');
      const groups = await c.var.store.listGroups({
        ...(query.status ? { status: query.status } : {}),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
        ...(query.offset !== undefined ? { offset: query.offset } : {}),
      });
      return c.json({ groups });
    })
    .get('/:id', async (c) => {
      const { id } = parseValue(idParam, c.req.param(), 'id');
      const query = parseValue(getQuery, c.req.query(), 'query');
      const { group, trajectories } = await c.var.store.getGroup({
        groupId: id,
        includeTurns: query.turns ?? false,
      });
      const counts = Object.fromEntries(trajectoryStatuses.map((status) => [status, 0])) as Record<
        TrajectoryStatus,
        number
      >;
      for (const trajectory of trajectories) counts[trajectory.status] += 1;
      const ended = trajectories.length - counts.running;
      return c.json({ group, progress: { size: group.size, ended, ...counts }, trajectories });
    });
}
