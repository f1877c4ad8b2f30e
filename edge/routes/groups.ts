// GET /v1/groups (newest first, by status) and GET /v1/groups/:id (the group, its trajectories and
// a progress count; `?turns=true` adds every trajectory's turns).
import { Hono } from 'hono';
import { z } from 'zod';
import { groupStatuses, trajectoryStatuses, type TrajectoryStatus } from '../../protocol/statuses.ts';
import type { EdgeEnv } from '../app-env.ts';
import { parseValue } from '../http/parse-body.ts';

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

export function groupRoutes() {
  return new Hono<EdgeEnv>()
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
