// Recording the tools a trajectory's episode is offered, after it started (the recording proxy learns
// them from each request's `tools`). Replaces the stored list; a finished trajectory keeps its own.
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import { toolSpecListSchema } from '../../protocol/chat.ts';
import { StoreError } from '../errors.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { toStoredTools } from './trajectory-row.ts';

export const setTrajectoryToolsSchema = z.object({
  trajectoryId: id,
  tools: toolSpecListSchema,
});
export type SetTrajectoryToolsInput = z.input<typeof setTrajectoryToolsSchema>;

export async function setTrajectoryTools(db: StoreDb, input: SetTrajectoryToolsInput): Promise<void> {
  const { trajectoryId, tools } = parseInput(setTrajectoryToolsSchema, input, 'setTrajectoryTools', {
    keepText: ['tools'],
  });
  const updated = await db
    .update(trajectories)
    .set(toStoredTools(tools))
    .where(and(eq(trajectories.id, trajectoryId), eq(trajectories.status, 'running')))
    .returning({ id: trajectories.id });
  if (updated.length > 0) return;
  const [stored] = await db
    .select({ status: trajectories.status })
    .from(trajectories)
    .where(eq(trajectories.id, trajectoryId));
  if (!stored) throw new StoreError('not-found', `trajectory ${trajectoryId} does not exist`);
  throw new StoreError(
    'trajectory-closed',
    `trajectory ${trajectoryId} is ${stored.status}; its tools are kept`,
  );
}
