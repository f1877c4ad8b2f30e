// Trajectories: POST /v1/trajectories starts one for an agent that records through the proxy (live
// traffic, or a member of a group), returning its trajectory key and baseURL once (docs/edge.md, "Who
// writes a trajectory"), or, given turns, stores whole episodes recorded elsewhere (one, or
// `episodes`); GET /:id reads one with its turns, GET /:id/events streams its turns as server-sent
// events until it ends, POST /:id/finish closes it with a status and reward (a client trajectory's
// key in `x-edgerl-trajectory`; the same finish is POST /t/<key>/finish).
import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { endStatuses, refineEndReason } from '../../protocol/finish.ts';
import { emptyHistoryDigest } from '../../protocol/history-digest.ts';
import { rewardSchema } from '../../protocol/validate-turns.ts';
import type { EdgeEnv } from '../app-env.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { parseBody, parseValue, readJsonBody } from '../http/parse-body.ts';
import { trajectoryCredential, trajectoryHeader } from '../http/trajectory-credential.ts';
import { newTrajectoryKey } from '../../protocol/trajectory-key.ts';
import { classifyTrajectoriesBody, ingestError } from './ingest-request.ts';
import { bodyLimit } from '../middleware/body-limit.ts';
import type { ReplicaRouter } from '../routing/replica-router.ts';
import type { TrajectoryHeads } from '../proxy/trajectory-heads.ts';
import { resolveRoute } from '../routing/resolve-route.ts';
import type { RouteCache } from '../routing/route-cache.ts';
import { recordedRoute, type Route, trajectoryRouteFields } from '../routing/route.ts';

export interface TrajectoryRouteDeps {
  readonly defaultModel: string | undefined;
  /** The inference fleet, when there is one: a version no replica holds is refused (resolveRoute). */
  readonly fleet?: ReplicaRouter;
  readonly maxBodyBytes: number;
  /** The limit for a body with whole episodes (POST / with `turns` or `episodes`). */
  readonly maxIngestBytes: number;
  /** How often a live stream looks for new turns, in milliseconds. */
  readonly pollMs: number;
  /** A stream ends (event `timeout`) after this long; the client reconnects with Last-Event-ID. */
  readonly maxStreamMs: number;
  /** The proxy's heads: a trajectory started here is known to it at once, one finished here is dropped. */
  readonly heads?: TrajectoryHeads;
  readonly routes?: RouteCache;
}

const idParam = z.object({ id: z.uuid() });

const startSchema = z.strictObject({
  env: z.string().min(1).max(200).optional(),
  groupId: z.uuid().optional(),
  taskId: z.uuid().optional(),
  policy: z.string().min(1).max(300).optional(),
  experiment: z.string().min(1).max(300).optional(),
  stickinessKey: z.string().min(1).max(500).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** The store's finish (finishTrajectory) under the API's names, with the agent's reward bounded. */
export const finishSchema = z
  .strictObject({
    status: z.enum(endStatuses),
    /** The agent's own reward in [0, 1] (stored as the verifier reward; protocol/validate-turns.ts). */
    reward: rewardSchema.optional(),
    /** Why it failed (`error`) or was cut short (`truncated`). */
    reason: z.string().min(1).max(2000).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine(refineEndReason('reason'));

/** A turn index is a Postgres integer (int4): anything larger could name no turn, and would overflow. */
const maxTurnIndex = 2 ** 31 - 1;
const eventsQuery = z.object({ after: z.coerce.number().int().min(-1).max(maxTurnIndex).optional() });
/** The id of a `turn` event the edge sent (its index); any other Last-Event-ID is ignored, as before. */
const lastEventIdHeader = z.coerce
  .number()
  .int()
  .min(0)
  .max(maxTurnIndex, {
    error: `must be a turn index, at most ${maxTurnIndex}`,
  });

/**
 * Finishes a client trajectory with the body's outcome, as the writer holding `keyDigest` (the
 * store refuses another writer's trajectory, or a wrong key): POST /:id/finish and /t/<key>/finish.
 */
export async function finishClientTrajectory(
  c: Context<EdgeEnv>,
  trajectoryId: string,
  keyDigest: string | undefined,
  heads: TrajectoryHeads | undefined,
) {
  const body = await parseBody(c, finishSchema);
  const { trajectory, groupCompleted } = await c.var.store.finishTrajectory({
    trajectoryId,
    status: body.status,
    ...(body.reward !== undefined ? { verifierReward: body.reward } : {}),
    ...(body.reason !== undefined ? { errorReason: body.reason } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    writer: 'client',
    ...(keyDigest !== undefined ? { keyDigest } : {}),
  });
  heads?.delete(trajectoryId);
  return { trajectory, groupCompleted };
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('payload-too-large', `body: larger than the limit of ${maxBytes} bytes`, {
    field: 'body',
  });
}

export function trajectoryRoutes(deps: TrajectoryRouteDeps) {
  return new Hono<EdgeEnv>()
    .post('/', bodyLimit(Math.max(deps.maxBodyBytes, deps.maxIngestBytes)), async (c) => {
      const { json, bytes } = await readJsonBody(c);
      const kind = classifyTrajectoriesBody(json);
      if (kind.kind === 'ingest') {
        if (bytes > deps.maxIngestBytes) throw tooLarge(deps.maxIngestBytes);
        const result = await c.var.store
          .ingestTrajectories({ episodes: kind.episodes })
          .catch((error: unknown) => {
            throw ingestError(error, kind.single);
          });
        const only = result.trajectories[0];
        if (kind.single && only) c.header('Location', `/v1/trajectories/${only.trajectoryId}`);
        return c.json(result, result.createdTrajectories > 0 ? 201 : 200);
      }
      if (bytes > deps.maxBodyBytes) throw tooLarge(deps.maxBodyBytes);
      const body = parseValue(startSchema, json, 'body');
      if (!body.env && !body.groupId && !body.taskId) {
        throw invalidField('env', 'required unless groupId or taskId names it');
      }
      const store = c.var.store;
      let stickinessKey = body.stickinessKey ?? crypto.randomUUID();
      let route: Route | undefined;
      if (body.groupId && body.policy === undefined && body.experiment === undefined) {
        // A member of a group takes the group's routing (routed once for all of its members).
        const { group } = await store.getGroup({ groupId: body.groupId });
        route = recordedRoute(group);
        if (typeof group.metadata.stickinessKey === 'string')
          stickinessKey = body.stickinessKey ?? group.metadata.stickinessKey;
      }
      if (!route && (body.policy !== undefined || body.experiment !== undefined || deps.defaultModel)) {
        route = await resolveRoute(
          store,
          {
            ...(body.policy !== undefined ? { policy: body.policy } : {}),
            ...(body.experiment !== undefined ? { experiment: body.experiment } : {}),
            stickinessKey,
          },
          deps.defaultModel,
          {
            ...(deps.fleet ? { fleet: deps.fleet } : {}),
            ...(deps.routes ? { routes: deps.routes } : {}),
          },
        );
      }
      const routed = route ? trajectoryRouteFields(route) : { metadata: {} };
      // Its key, made here so the id it names is the row's; the store keeps only the digest.
      const { key, keyDigest } = newTrajectoryKey(crypto.randomUUID());
      const trajectory = await store.startTrajectory({
        id: key.slice(0, key.indexOf('.')),
        keyDigest,
        ...(body.env ? { env: body.env } : {}),
        ...(body.groupId ? { groupId: body.groupId } : {}),
        ...(body.taskId ? { taskId: body.taskId } : {}),
        ...routed,
        stickinessKey,
        metadata: { ...body.metadata, ...routed.metadata },
      });
      // Its head as a read would give it, so the proxy's first call on it needs no read either.
      deps.heads?.set(trajectory.id, {
        turnCount: trajectory.turnCount,
        historyDigest: emptyHistoryDigest,
        tools: trajectory.tools,
        route: recordedRoute(trajectory),
        keyDigest,
      });
      c.header('Location', `/v1/trajectories/${trajectory.id}`);
      // The key is in this response only: never logged, never stored in clear, never shown again.
      const baseURL = `${new URL(c.req.url).origin}/t/${key}/v1`;
      return c.json(
        {
          trajectory,
          key,
          baseURL,
          model: route?.model ?? null,
          arm: route?.armName ?? null,
        },
        201,
      );
    })
    .get('/:id', async (c) => {
      const { id } = parseValue(idParam, c.req.param(), 'id');
      return c.json(await c.var.store.getTrajectory(id));
    })
    .post('/:id/finish', bodyLimit(deps.maxBodyBytes), async (c) => {
      const { id } = parseValue(idParam, c.req.param(), 'id');
      const credential = trajectoryCredential(c, false);
      if (credential && credential.trajectoryId !== id) {
        throw invalidField(trajectoryHeader, `names trajectory ${credential.trajectoryId}, not ${id}`);
      }
      return c.json(await finishClientTrajectory(c, id, credential?.keyDigest, deps.heads));
    })
    .get('/:id/events', async (c) => {
      const { id } = parseValue(idParam, c.req.param(), 'id');
      const query = parseValue(eventsQuery, c.req.query(), 'query');
      const lastEventId = c.req.header('last-event-id');
      const resumeAt =
        lastEventId !== undefined && /^\d+$/.test(lastEventId)
          ? parseValue(lastEventIdHeader, lastEventId, 'last-event-id')
          : undefined;
      let after = resumeAt ?? query.after ?? -1;
      // 404 before the stream starts, while a status can still be sent.
      await c.var.store.turnsAfter({ trajectoryId: id, afterIndex: after, limit: 1 });
      // The stream outlives the handler: keep the request's store until it ends.
      const letGo = c.var.keepStore();
      const store = c.var.store;
      return streamSSE(c, async (stream) => {
        let open = true;
        stream.onAbort(() => {
          open = false;
        });
        const started = Date.now();
        try {
          while (open) {
            const { trajectory, turns } = await store.turnsAfter({
              trajectoryId: id,
              afterIndex: after,
            });
            for (const turn of turns) {
              await stream.writeSSE({ event: 'turn', id: String(turn.index), data: JSON.stringify(turn) });
              after = turn.index;
            }
            if (trajectory.status !== 'running') {
              await stream.writeSSE({ event: 'end', data: JSON.stringify(trajectory) });
              break;
            }
            if (Date.now() - started > deps.maxStreamMs) {
              await stream.writeSSE({ event: 'timeout', data: JSON.stringify({ after }) });
              break;
            }
            await stream.sleep(deps.pollMs);
          }
        } finally {
          letGo();
        }
      });
    });
}
