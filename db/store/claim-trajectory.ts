// Claiming one rollout episode before running it, in ONE statement (one round trip): the lease (free,
// expired, or already the caller's, as claimTrajectories decides) and, when it is won, what the runner
// reads to start: the trajectory row and its task, and any stored turn another writer stored (a runner
// never resumes from one: docs/edge.md, "Who writes a trajectory"). The turns are not in it: a fresh episode has none
// (turn_count 0), and a resumed one, rare, reads them with getTrajectory. Refused, a second query says
// why (another runner's live lease, or the episode ended), only then.
import { eq, getTableColumns, sql } from 'drizzle-orm';
import type { TrajectoryWriter } from '../../protocol/trajectory-writer.ts';
import type { z } from 'zod';
import { executeNamed } from '../named-statement.ts';
import { rowsOf } from '../rows-of.ts';
import { type Task, tasks } from '../schema/tasks.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { rowOf } from './raw-row.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';
import { leaseExpiry, trajectoryLeaseSchema } from './trajectory-leases.ts';

const claimTrajectorySchema = trajectoryLeaseSchema.extend({ trajectoryId: id });
export type ClaimTrajectoryInput = z.input<typeof claimTrajectorySchema>;

export type TrajectoryClaim =
  | {
      readonly claimed: true;
      /** The row as the claim left it (lease renewed). */
      readonly trajectory: Trajectory;
      /** Its task; null for a trajectory without one. */
      readonly task: Task | null;
      /**
       * Its first stored turn that another writer stored (turns.writer other than `runner`): the
       * episode must not resume from it. Absent when every turn is the runner's (or predates the column).
       */
      readonly foreignTurn?: { readonly index: number; readonly writer: TrajectoryWriter };
    }
  | {
      readonly claimed: false;
      /** Why not: another runner's live lease, or the episode ended (or does not exist). */
      readonly reason: string;
    };

/** The task's columns, named `task__<column>` beside the trajectory's own. */
const taskColumns = Object.values(getTableColumns(tasks)).map((column) => column.name);
const taskSelection = sql.raw(taskColumns.map((name) => `tasks.${name} as task__${name}`).join(', '));

export async function claimTrajectory(db: StoreDb, input: ClaimTrajectoryInput): Promise<TrajectoryClaim> {
  const claim = parseInput(claimTrajectorySchema, input, 'claimTrajectory');
  // The same condition as claimTrajectories (trajectory-leases.ts), for one episode: only a rollout
  // slot (writer `runner`) is ever leased; a client's or an upload's row is not a runner's to hold.
  const statement = sql`
    with claimed as (
      update trajectories set runner = ${claim.runner}::text, heartbeat_at = now(),
        lease_expires_at = ${leaseExpiry(claim.leaseSeconds)}
      where id = ${claim.trajectoryId}::uuid and status = 'running' and writer = 'runner'
        and (runner is null or lease_expires_at is null or lease_expires_at < now() or runner = ${claim.runner}::text)
      returning *
    )
    select claimed.*, ${taskSelection},
      (select to_jsonb(f) from (select index, writer from turns
        where trajectory_id = claimed.id and writer <> 'runner' order by index limit 1) f) as foreign_turn
    from claimed left join tasks on tasks.id = claimed.task_id`;
  const [row] = rowsOf<Record<string, unknown>>(await executeNamed(db, statement));
  if (row) {
    const task: Record<string, unknown> = {};
    for (const name of taskColumns) task[name] = row[`task__${name}`];
    const foreign = row.foreign_turn as { index: number; writer: TrajectoryWriter } | null | undefined;
    return {
      claimed: true,
      trajectory: fromTrajectoryRow(rowOf(trajectories, row)),
      task: task.id === null || task.id === undefined ? null : rowOf(tasks, task),
      ...(foreign ? { foreignTurn: { index: foreign.index, writer: foreign.writer } } : {}),
    };
  }
  const [held] = await db
    .select({
      writer: trajectories.writer,
      status: trajectories.status,
      runner: trajectories.runner,
      expiresAt: trajectories.leaseExpiresAt,
    })
    .from(trajectories)
    .where(eq(trajectories.id, claim.trajectoryId));
  if (!held) return { claimed: false, reason: 'it does not exist' };
  if (held.writer !== 'runner') {
    return {
      claimed: false,
      reason: `its writer is ${held.writer}: only a rollout slot (writer runner) is claimed by a runner`,
    };
  }
  if (held.status !== 'running') return { claimed: false, reason: `it already ended (${held.status})` };
  return {
    claimed: false,
    reason: `${held.runner ?? 'another runner'} holds it until ${held.expiresAt?.toISOString() ?? '?'}`,
  };
}
