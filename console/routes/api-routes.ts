// The console's JSON: step series of training runs (what the charts draw), the groups search, and a
// running group's new turns (what the live view polls: plain polling, which Workers serve as well as
// Node, and which a proxy cannot buffer the way it can an event stream).
import { Hono } from 'hono';
import { z } from 'zod';
import type { TurnRow } from '../../db/schema/turns.ts';
import { ConsoleRequestError } from '../console-error.ts';
import type { ConsoleEnv } from '../console-env.ts';
import { parseGroupFilter } from '../data/load-groups.ts';

const afterSchema = z.record(
  z.uuid(),
  z
    .number()
    .int()
    .min(-1)
    .max(2 ** 31 - 1),
);

function liveTurn(turn: TurnRow) {
  const metadata = (turn.metadata ?? {}) as { toolName?: unknown };
  return {
    trajectoryId: turn.trajectoryId,
    index: turn.index,
    role: turn.role,
    content: turn.content,
    toolCalls: (turn.toolCalls ?? []).map((call) => ({
      name: call.function.name,
      arguments: call.function.arguments,
    })),
    toolCallId: turn.toolCallId,
    toolError: turn.toolError,
    toolName: typeof metadata.toolName === 'string' ? metadata.toolName : null,
    servedBy: turn.servedBy,
    latencyMs: turn.latencyMs,
  };
}

export function apiRoutes() {
  return new Hono<ConsoleEnv>()
    .get('/runs/steps', async (c) => {
      const ids = c.req.queries('run') ?? [];
      if (ids.length === 0) throw new ConsoleRequestError('name at least one run: ?run=ID&run=ID');
      const steps = await c.var.store.trainingRunSteps({ trainingRunIds: ids });
      return c.json({
        runs: ids.map((id) => ({ id, steps: steps.filter((step) => step.trainingRunId === id) })),
      });
    })
    .get('/groups', async (c) => {
      const { input, problems } = parseGroupFilter(c.req.query());
      return c.json({ groups: await c.var.store.searchGroups(input), problems });
    })
    .get('/groups/:id/live', async (c) => {
      let after: Record<string, number> = {};
      const raw = c.req.query('after');
      if (raw) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw);
        } catch {
          throw new ConsoleRequestError('after: not JSON; send {"<trajectory id>": <last index>, …}');
        }
        const checked = afterSchema.safeParse(parsed);
        if (!checked.success) throw new ConsoleRequestError('after: must map trajectory ids to turn indexes');
        after = checked.data;
      }
      const update = await c.var.store.groupTurnsAfter({ groupId: c.req.param('id'), after });
      c.header('cache-control', 'no-store');
      return c.json({
        group: {
          id: update.group.id,
          status: update.group.status,
          size: update.group.size,
          endedCount: update.group.endedCount,
        },
        trajectories: update.trajectories.map((trajectory) => ({
          id: trajectory.id,
          status: trajectory.status,
          turnCount: trajectory.turnCount,
          verifierReward: trajectory.verifierReward,
          judgeScore: trajectory.judgeScore,
          finalReward: trajectory.finalReward,
        })),
        turns: update.turns.map(liveTurn),
      });
    });
}
