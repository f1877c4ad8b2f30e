// Small builders for store tests: unique names, a task with a group, and turn records.
import { randomUUID } from 'node:crypto';
import type { TaskSplit } from '../../protocol/statuses.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import type { RolloutGroup } from '../../db/schema/rollout-groups.ts';
import type { Task } from '../../db/schema/tasks.ts';
import type { Trajectory } from '../../db/schema/trajectories.ts';
import type { Store } from '../../db/store.ts';

/** A name no other test in the same database uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export interface GroupFixture {
  readonly task: Task;
  readonly group: RolloutGroup;
  readonly trajectories: Trajectory[];
}

/** A task, a group of `size` on it, and `started` trajectories in the group (default: all of them). */
export async function makeGroup(
  store: Store,
  options: {
    size?: number;
    started?: number;
    env?: string;
    policyVersionId?: string;
    split?: TaskSplit;
    /** Who writes the slots (db/store/trajectory-access.ts); default `client`, as startTrajectory's. */
    writer?: 'runner' | 'client';
  } = {},
): Promise<GroupFixture> {
  const size = options.size ?? 2;
  const task = await store.upsertTask({
    env: options.env ?? 'test-env',
    key: uniqueName('task'),
    input: { q: 1 },
    ...(options.split ? { split: options.split } : {}),
  });
  const group = await store.createGroup({ taskId: task.id, size, policyVersionId: options.policyVersionId });
  const trajectories: Trajectory[] = [];
  for (let slot = 0; slot < (options.started ?? size); slot += 1) {
    trajectories.push(
      await store.startTrajectory({
        groupId: group.id,
        ...(options.writer ? { writer: options.writer } : {}),
      }),
    );
  }
  return { task, group, trajectories };
}

/** A complete group: every trajectory finished with the given verifier rewards (one per trajectory). */
export async function makeCompleteGroup(store: Store, rewards: readonly number[]): Promise<GroupFixture> {
  const fixture = await makeGroup(store, { size: rewards.length });
  for (const [slot, trajectory] of fixture.trajectories.entries()) {
    await store.finishTrajectory({
      trajectoryId: trajectory.id,
      status: 'finished',
      verifierReward: rewards[slot],
    });
  }
  return fixture;
}

export function userTurn(trajectoryId: string, index: number, content = 'What is 2 + 2?'): TurnInput {
  return { trajectoryId, index, role: 'user', content };
}

export function assistantTurn(
  trajectoryId: string,
  index: number,
  overrides: Partial<TurnInput> = {},
): TurnInput {
  return {
    trajectoryId,
    index,
    role: 'assistant',
    content: '4',
    completionTokenIds: [19, 151645],
    completionLogprobs: [-0.0123456789012345, -1.5e-7],
    promptTokenCount: 21,
    servedBy: 'agent@0',
    latencyMs: 35.5,
    ...overrides,
  };
}
