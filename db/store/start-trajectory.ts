// Starting a trajectory, alone (live traffic) or in a group. Joining a group locks the group row, so
// concurrent starts never overfill it; the task and policy version default to the group's. With a
// caller-chosen id, a retried start returns the trajectory it already created.
import { count, eq } from 'drizzle-orm';
import { z } from 'zod';
import { toolSpecListSchema } from '../../protocol/chat.ts';
import { StoreError } from '../errors.ts';
import { metadataSchema } from '../schema/json.ts';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import { tasks } from '../schema/tasks.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, leaseSeconds, name } from './fields.ts';
import { leaseExpiry } from './trajectory-leases.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow, toStoredTools } from './trajectory-row.ts';

export const startTrajectorySchema = z.object({
  /** A caller-chosen id: a retried start with the same id returns the stored trajectory instead of adding one. */
  id: id.optional(),
  /** The environment; may be left out when a task or group names it. */
  env: name.optional(),
  groupId: id.optional(),
  taskId: id.optional(),
  policyVersionId: id.optional(),
  experimentArmId: id.optional(),
  stickinessKey: z.string().min(1).max(500).optional(),
  metadata: metadataSchema.optional(),
  /** The tools the episode is offered, stored for the trainer and the judge to render. */
  tools: toolSpecListSchema.optional(),
  /**
   * A rollout slot an edge will run: it waits this many seconds for its first runner (any runner may
   * claim it meanwhile) before a sweep counts it lost. Absent: no edge runs it (an outside agent
   * drives it through the proxy), and no sweep ever takes it.
   */
  awaitRunnerSeconds: leaseSeconds.optional(),
  /**
   * Who writes it (trajectory-access.ts). Default: `runner` for a slot an edge runs (with
   * `awaitRunnerSeconds`), else `client`.
   */
  writer: z.enum(['runner', 'client']).optional(),
  /**
   * The hex SHA-256 of the trajectory key its client will write it with (trajectory-access.ts); only
   * for a trajectory no runner runs. Absent: its id alone writes it (how rows before keys behave).
   */
  keyDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256 digest')
    .optional(),
});
export type StartTrajectoryInput = z.input<typeof startTrajectorySchema>;

export async function startTrajectory(db: StoreDb, input: StartTrajectoryInput): Promise<Trajectory> {
  const start = parseInput(startTrajectorySchema, input, 'startTrajectory', { keepText: ['tools'] });
  const writer = start.writer ?? (start.awaitRunnerSeconds !== undefined ? 'runner' : 'client');
  if (start.keyDigest !== undefined && writer !== 'client') {
    throw new StoreError(
      'validation',
      'startTrajectory: keyDigest: a rollout slot is written by its runner, not with a key',
    );
  }
  return db.transaction(async (tx) => {
    let taskId = start.taskId;
    let policyVersionId = start.policyVersionId;
    // The group is locked before looking for a retried id, so two concurrent retries see each other.
    const [group] = start.groupId
      ? await tx.select().from(rolloutGroups).where(eq(rolloutGroups.id, start.groupId)).for('update')
      : [];
    if (start.id) {
      const [stored] = await tx.select().from(trajectories).where(eq(trajectories.id, start.id));
      if (stored) return sameStart(fromTrajectoryRow(stored), start);
    }
    if (start.groupId) {
      if (!group) throw new StoreError('not-found', `group ${start.groupId} does not exist`);
      if (group.status !== 'running') {
        throw new StoreError(
          'conflict',
          `group ${group.id} is ${group.status}; it takes no more trajectories`,
        );
      }
      if (taskId && taskId !== group.taskId) {
        throw new StoreError(
          'validation',
          `startTrajectory: taskId: group ${group.id} is for task ${group.taskId}`,
        );
      }
      const [members] = await tx
        .select({ total: count() })
        .from(trajectories)
        .where(eq(trajectories.groupId, group.id));
      if ((members?.total ?? 0) >= group.size) {
        throw new StoreError('conflict', `group ${group.id} is full (${group.size} trajectories)`);
      }
      taskId = group.taskId;
      policyVersionId ??= group.policyVersionId ?? undefined;
    }
    let env = start.env;
    if (taskId) {
      const [task] = await tx.select({ env: tasks.env }).from(tasks).where(eq(tasks.id, taskId));
      if (!task) throw new StoreError('not-found', `task ${taskId} does not exist`);
      if (env && env !== task.env) {
        throw new StoreError(
          'validation',
          `startTrajectory: env: task ${taskId} belongs to env "${task.env}", not "${env}"`,
        );
      }
      env = task.env;
    }
    if (!env) {
      throw new StoreError(
        'validation',
        'startTrajectory: env: required when neither taskId nor groupId is given',
      );
    }
    const [row] = await tx
      .insert(trajectories)
      .values({
        ...(start.id ? { id: start.id } : {}),
        env,
        groupId: start.groupId ?? null,
        taskId: taskId ?? null,
        policyVersionId: policyVersionId ?? null,
        experimentArmId: start.experimentArmId ?? null,
        stickinessKey: start.stickinessKey ?? null,
        metadata: start.metadata ?? {},
        ...toStoredTools(start.tools ?? null),
        // A slot an edge runs is its runner's; any other start is a client's (trajectory-access.ts).
        writer,
        keyDigest: start.keyDigest ?? null,
        ...(start.awaitRunnerSeconds !== undefined
          ? { leaseExpiresAt: leaseExpiry(start.awaitRunnerSeconds) }
          : {}),
      })
      .returning();
    if (!row) throw new Error('insert returned no row');
    return fromTrajectoryRow(row);
  });
}

/** A retried start (same id) must repeat the original; anything else reusing the id is a conflict. */
function sameStart(stored: Trajectory, start: z.output<typeof startTrajectorySchema>): Trajectory {
  const differs =
    (start.groupId !== undefined && start.groupId !== stored.groupId) ||
    (start.taskId !== undefined && start.taskId !== stored.taskId) ||
    (start.env !== undefined && start.env !== stored.env);
  if (differs)
    throw new StoreError(
      'conflict',
      `trajectory ${stored.id} already exists with another group, task or env`,
    );
  return stored;
}
