// Tasks, upserted by (env, key): an environment re-seeding its task list updates inputs in place, so
// groups and trajectories keep pointing at the same task ids.
import { taskSplits } from '../../protocol/statuses.ts';
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { jsonValueSchema } from '../schema/json.ts';
import { type Task, tasks } from '../schema/tasks.ts';
import type { StoreDb } from '../store-db.ts';
import { int4, name } from './fields.ts';
import { parseInput } from './parse-input.ts';

export const taskInputSchema = z.object({
  env: name,
  key: z.string().min(1).max(500),
  input: jsonValueSchema,
  split: z.enum(taskSplits).default('train'),
  seed: int4.optional(),
});
export type TaskInput = z.input<typeof taskInputSchema>;

const tasksInputSchema = z
  .array(taskInputSchema)
  .min(1)
  .max(10_000)
  .superRefine((list, ctx) => {
    const seen = new Map<string, number>();
    list.forEach((task, index) => {
      const id = `${task.env}\u0000${task.key}`;
      const first = seen.get(id);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'key'],
          message: `repeats task ${first} (${task.env}/${task.key})`,
        });
      }
      seen.set(id, index);
    });
  });

/** Inserts or updates each task by (env, key); returns the stored rows. */
export async function upsertTasks(db: StoreDb, input: readonly TaskInput[]): Promise<Task[]> {
  const list = parseInput(tasksInputSchema, input, 'tasks');
  return db
    .insert(tasks)
    .values(list.map((task) => ({ ...task, seed: task.seed ?? null })))
    .onConflictDoUpdate({
      target: [tasks.env, tasks.key],
      set: {
        input: sql`excluded.input`,
        split: sql`excluded.split`,
        seed: sql`excluded.seed`,
        updatedAt: sql`now()`,
      },
    })
    .returning();
}

export async function upsertTask(db: StoreDb, input: TaskInput): Promise<Task> {
  const [task] = await upsertTasks(db, [input]);
  if (!task) throw new Error('upsert returned no row');
  return task;
}
