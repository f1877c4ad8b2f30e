// Starting a rollout group with all its trajectories in ONE statement (one round trip): the group row
// and one trajectory per slot, each on the group's task (and its env) and policy version. What
// startTrajectory checks one join at a time holds here by construction: the slots are the group's
// whole membership, written with it, so none can overfill it; a task that does not exist fails the
// statement (its foreign key: `not-found`), so nothing is written.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { toolSpecListSchema } from '../../protocol/chat.ts';
import { StoreError } from '../errors.ts';
import { rowsOf } from '../rows-of.ts';
import { metadataSchema } from '../schema/json.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { createGroupSchema } from './create-group.ts';
import { id, leaseSeconds } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { rowOf } from './raw-row.ts';
import { fromTrajectoryRow, toStoredTools } from './trajectory-row.ts';

const slotSchema = z.object({
  experimentArmId: id.optional(),
  stickinessKey: z.string().min(1).max(500).optional(),
  metadata: metadataSchema.optional(),
});

export const startGroupSchema = createGroupSchema.extend({
  /** One entry per trajectory; as many as `size`. */
  slots: z.array(slotSchema).min(1).max(1024),
  /** The tools every slot is offered (startTrajectory's `tools`). */
  tools: toolSpecListSchema.optional(),
  /** How long each slot waits for its first runner (startTrajectory's `awaitRunnerSeconds`). */
  awaitRunnerSeconds: leaseSeconds.optional(),
});
export type StartGroupInput = z.input<typeof startGroupSchema>;

export interface StartedGroup {
  readonly group: RolloutGroup;
  /** In slot order. */
  readonly trajectories: Trajectory[];
}

export async function startGroup(db: StoreDb, input: StartGroupInput): Promise<StartedGroup> {
  const start = parseInput(startGroupSchema, input, 'startGroup', { keepText: ['tools'] });
  if (start.slots.length !== start.size) {
    throw new StoreError(
      'validation',
      `startGroup: slots: must hold ${start.size} entries (the group's size)`,
    );
  }
  const stored = toStoredTools(start.tools ?? null);
  // Ids chosen here, so the trajectories come back in slot order whatever order RETURNING gives.
  const slots = start.slots.map((slot) => ({
    id: crypto.randomUUID(),
    experiment_arm_id: slot.experimentArmId ?? null,
    stickiness_key: slot.stickinessKey ?? null,
    metadata: slot.metadata ?? {},
  }));
  const expiry =
    start.awaitRunnerSeconds !== undefined
      ? sql`now() + ${start.awaitRunnerSeconds}::double precision * interval '1 second'`
      : sql`null::timestamptz`;
  // Slots an edge runs are their runner's; without one, outside agents fill them (trajectory-access.ts).
  const writer = start.awaitRunnerSeconds !== undefined ? 'runner' : 'client';
  // The env comes from the task, read in the same statement; a missing task leaves `created` empty
  // and the outer check below reports it (the insert's own foreign key would too).
  const statement = sql`
    with task as (
      select id, env from tasks where id = ${start.taskId}::uuid
    ), created as (
      insert into rollout_groups (task_id, size, policy_version_id, experiment_id, metadata)
      select task.id, ${start.size}::int, ${start.policyVersionId ?? null}::uuid, ${start.experimentId ?? null}::uuid,
        ${JSON.stringify(start.metadata ?? {})}::jsonb
      from task
      returning *
    ), members as (
      insert into trajectories (id, group_id, env, task_id, policy_version_id, experiment_arm_id, stickiness_key,
        metadata, tools, text_encoding, lease_expires_at, writer)
      select s.id, created.id, task.env, created.task_id, created.policy_version_id, s.experiment_arm_id,
        s.stickiness_key, s.metadata, ${stored.tools === null ? null : JSON.stringify(stored.tools)}::jsonb,
        ${stored.textEncoding}, ${expiry}, ${writer}::text
      from created cross join task
        cross join jsonb_to_recordset(${JSON.stringify(slots)}::jsonb)
          as s(id uuid, experiment_arm_id uuid, stickiness_key text, metadata jsonb)
      returning *
    )
    select 'group' as kind, to_jsonb(created.*) as row from created
    union all
    select 'trajectory', to_jsonb(members.*) from members`;
  const rows = rowsOf<{ kind: string; row: Record<string, unknown> }>(await db.execute(statement));
  const groupRow = rows.find((row) => row.kind === 'group');
  if (!groupRow) throw new StoreError('not-found', `task ${start.taskId} does not exist`);
  // to_jsonb writes timestamps as ISO text and jsonb as values: what the columns' mappers read.
  const byId = new Map(
    rows
      .filter((row) => row.kind === 'trajectory')
      .map((row) => {
        const trajectory = fromTrajectoryRow(rowOf(trajectories, row.row));
        return [trajectory.id, trajectory] as const;
      }),
  );
  const members = slots.map((slot) => {
    const trajectory = byId.get(slot.id);
    if (!trajectory) throw new Error(`startGroup: slot ${slot.id} was not returned`);
    return trajectory;
  });
  return { group: rowOf(rolloutGroups, groupRow.row), trajectories: members };
}
