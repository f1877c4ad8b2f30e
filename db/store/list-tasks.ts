// Reading tasks: one by id, or an environment's tasks of one split in key order.
import { taskSplits } from '../../protocol/statuses.ts';
import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type Task, tasks } from '../schema/tasks.ts';
import type { StoreDb } from '../store-db.ts';
import { id, name } from './fields.ts';
import { parseInput } from './parse-input.ts';

export async function getTask(db: StoreDb, taskId: string): Promise<Task> {
  const [task] = await db
    .select()
    .from(tasks)
    .where(eq(tasks.id, parseInput(id, taskId, 'taskId')));
  if (!task) throw new StoreError('not-found', `task ${taskId} does not exist`);
  return task;
}

const listTasksSchema = z.object({
  env: name,
  split: z.enum(taskSplits).optional(),
  limit: z.number().int().min(1).max(10_000).default(1000),
  offset: z.number().int().min(0).default(0),
});
export type ListTasksInput = z.input<typeof listTasksSchema>;

export async function listTasks(db: StoreDb, input: ListTasksInput): Promise<Task[]> {
  const query = parseInput(listTasksSchema, input, 'listTasks');
  return db
    .select()
    .from(tasks)
    .where(and(eq(tasks.env, query.env), query.split ? eq(tasks.split, query.split) : undefined))
    .orderBy(asc(tasks.key))
    .limit(query.limit)
    .offset(query.offset);
}
