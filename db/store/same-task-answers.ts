// "Same task, two versions": for the tasks both versions answered, each version's latest ended
// trajectory of the task with its reward and final answer (its last assistant turn), side by side.
// Read-only; for the console's comparison of two versions (an experiment's arms, or any two).
import { type TrajectoryStatus, taskSplits } from '../../protocol/statuses.ts';
import { and, desc, eq, inArray, ne, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { JsonValue } from '../schema/json.ts';
import { tasks } from '../schema/tasks.ts';
import { trajectories } from '../schema/trajectories.ts';
import { turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTurnRow } from './turn-row.ts';

const sameTaskAnswersSchema = z
  .object({
    versionIds: z.tuple([id, id]),
    split: z.enum(taskSplits).optional(),
    limit: z.number().int().min(1).max(1000).default(100),
  })
  .refine((query) => query.versionIds[0] !== query.versionIds[1], {
    path: ['versionIds'],
    message: 'must name two different versions',
  });
export type SameTaskAnswersInput = z.input<typeof sameTaskAnswersSchema>;

export interface TaskAnswer {
  readonly trajectoryId: string;
  readonly status: TrajectoryStatus;
  /** final_reward, else verifier_reward. */
  readonly reward: number | null;
  /** The last assistant turn's text; null when it had none. */
  readonly answer: string | null;
  readonly turnCount: number;
}

export interface SameTaskAnswer {
  readonly task: {
    readonly id: string;
    readonly env: string;
    readonly key: string;
    readonly input: JsonValue;
  };
  /** In the order of `versionIds`. */
  readonly answers: [TaskAnswer, TaskAnswer];
}

export async function sameTaskAnswers(db: StoreDb, input: SameTaskAnswersInput): Promise<SameTaskAnswer[]> {
  const query = parseInput(sameTaskAnswersSchema, input, 'sameTaskAnswers');
  const latest = await db
    .selectDistinctOn([trajectories.taskId, trajectories.policyVersionId], {
      taskId: trajectories.taskId,
      versionId: trajectories.policyVersionId,
      trajectoryId: trajectories.id,
      status: trajectories.status,
      reward: sql<number | null>`coalesce(${trajectories.finalReward}, ${trajectories.verifierReward})`,
      turnCount: trajectories.turnCount,
    })
    .from(trajectories)
    .innerJoin(tasks, eq(tasks.id, trajectories.taskId))
    .where(
      and(
        inArray(trajectories.policyVersionId, query.versionIds),
        ne(trajectories.status, 'running'),
        query.split ? eq(tasks.split, query.split) : undefined,
      ),
    )
    .orderBy(
      trajectories.taskId,
      trajectories.policyVersionId,
      desc(trajectories.startedAt),
      desc(trajectories.id),
    );
  const byTask = new Map<string, Map<string, (typeof latest)[number]>>();
  for (const row of latest) {
    if (!row.taskId || !row.versionId) continue;
    const versions = byTask.get(row.taskId) ?? new Map();
    versions.set(row.versionId, row);
    byTask.set(row.taskId, versions);
  }
  const [first, second] = query.versionIds;
  const both = [...byTask.entries()].filter(([, versions]) => versions.has(first) && versions.has(second));
  if (both.length === 0) return [];
  const taskRows = await db
    .select({ id: tasks.id, env: tasks.env, key: tasks.key, input: tasks.input })
    .from(tasks)
    .where(
      inArray(
        tasks.id,
        both.map(([taskId]) => taskId),
      ),
    )
    .orderBy(tasks.env, tasks.key)
    .limit(query.limit);
  const trajectoryIds = both.flatMap(([, versions]) => [...versions.values()].map((row) => row.trajectoryId));
  const lastTurns = await db
    .selectDistinctOn([turns.trajectoryId])
    .from(turns)
    .where(and(inArray(turns.trajectoryId, trajectoryIds), eq(turns.role, 'assistant')))
    .orderBy(turns.trajectoryId, desc(turns.index));
  const answers = new Map(lastTurns.map((row) => [row.trajectoryId, fromTurnRow(row).content]));
  const answerOf = (row: (typeof latest)[number]): TaskAnswer => ({
    trajectoryId: row.trajectoryId,
    status: row.status,
    reward: row.reward === null ? null : Number(row.reward),
    answer: answers.get(row.trajectoryId) ?? null,
    turnCount: row.turnCount,
  });
  return taskRows.map((task) => {
    const versions = byTask.get(task.id) as Map<string, (typeof latest)[number]>;
    return {
      task,
      answers: [
        answerOf(versions.get(first) as (typeof latest)[number]),
        answerOf(versions.get(second) as (typeof latest)[number]),
      ],
    };
  });
}
