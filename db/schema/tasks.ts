// Environment tasks: the inputs episodes start from, keyed by (env, key) so environments can re-seed
// their task lists idempotently.
import { taskSplits } from '../../protocol/statuses.ts';
import { index, integer, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import type { JsonValue } from './json.ts';

export const tasks = pgTable(
  'tasks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The environment's name (`sql-agent`, `calculator`, …). */
    env: text('env').notNull(),
    /** The task's stable name inside its environment. */
    key: text('key').notNull(),
    input: jsonb('input').$type<JsonValue>().notNull(),
    split: text('split', { enum: taskSplits }).notNull().default('train'),
    /** Seed for environments with randomness, so an episode can be replayed. */
    seed: integer('seed'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  (table) => [
    unique('tasks_env_key_unique').on(table.env, table.key),
    index('tasks_env_split_idx').on(table.env, table.split),
    checkOneOf('tasks_split_check', table.split, taskSplits),
  ],
);

export type Task = typeof tasks.$inferSelect;
