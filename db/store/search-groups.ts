// Finding rollout groups for the console, newest first: by status, environment, sampling version,
// the range of the group's mean reward, and text in the task's key or any of its turns. Each comes
// with what a list row shows (task, version, how many trajectories ran and ended, reward spread).
// Text search is a plain case-insensitive substring scan (no index): fine for a console page of
// results, not for analytics (use `edgerl sql`).
import { groupStatuses } from '../../protocol/statuses.ts';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { policyVersions } from '../schema/policies.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { tasks } from '../schema/tasks.ts';
import { trajectories } from '../schema/trajectories.ts';
import { turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { id, name } from './fields.ts';
import { parseInput } from './parse-input.ts';

const searchGroupsSchema = z
  .object({
    status: z.array(z.enum(groupStatuses)).min(1).optional(),
    env: name.optional(),
    policyVersionId: id.optional(),
    /** Bounds on the mean reward (final_reward, else verifier_reward) of the group's rewarded trajectories. */
    minReward: z.number().finite().optional(),
    maxReward: z.number().finite().optional(),
    /** A substring of the task's key or of any turn's content, any case. */
    text: z.string().trim().min(1).max(200).optional(),
    limit: z.number().int().min(1).max(500).default(50),
    offset: z.number().int().min(0).default(0),
  })
  .refine(
    (query) =>
      query.minReward === undefined || query.maxReward === undefined || query.minReward <= query.maxReward,
    {
      path: ['maxReward'],
      message: 'must be at least minReward',
    },
  );
export type SearchGroupsInput = z.input<typeof searchGroupsSchema>;

export interface GroupListing {
  readonly group: RolloutGroup;
  readonly env: string;
  readonly taskKey: string;
  /** The served name of the version that sampled the group; null for groups without one. */
  readonly adapterName: string | null;
  readonly started: number;
  readonly ended: number;
  readonly rewarded: number;
  readonly meanReward: number | null;
  readonly minReward: number | null;
  readonly maxReward: number | null;
}

/** `%`, `_` and `\` match themselves in the LIKE pattern. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function searchGroups(db: StoreDb, input: SearchGroupsInput = {}): Promise<GroupListing[]> {
  const query = parseInput(searchGroupsSchema, input, 'searchGroups');
  const reward = sql`coalesce(${trajectories.finalReward}, ${trajectories.verifierReward})`;
  const meanReward = sql<number | null>`avg(${reward})::float8`;
  const pattern = query.text ? likePattern(query.text) : undefined;
  const textMatch = pattern
    ? sql`(${tasks.key} ilike ${pattern} or exists (
        select 1 from ${turns} inner join ${trajectories} as searched on searched.id = ${turns.trajectoryId}
        where searched.group_id = ${rolloutGroups.id} and ${turns.content} ilike ${pattern}))`
    : undefined;
  const having = and(
    query.minReward === undefined ? undefined : sql`${meanReward} >= ${query.minReward}`,
    query.maxReward === undefined ? undefined : sql`${meanReward} <= ${query.maxReward}`,
  );
  const rows = await db
    .select({
      group: rolloutGroups,
      env: tasks.env,
      taskKey: tasks.key,
      adapterName: policyVersions.adapterName,
      started: sql<number>`count(${trajectories.id})::integer`,
      ended: sql<number>`(count(${trajectories.id}) filter (where ${trajectories.status} <> 'running'))::integer`,
      rewarded: sql<number>`count(${reward})::integer`,
      meanReward,
      minReward: sql<number | null>`min(${reward})::float8`,
      maxReward: sql<number | null>`max(${reward})::float8`,
    })
    .from(rolloutGroups)
    .innerJoin(tasks, eq(tasks.id, rolloutGroups.taskId))
    .leftJoin(policyVersions, eq(policyVersions.id, rolloutGroups.policyVersionId))
    .leftJoin(trajectories, eq(trajectories.groupId, rolloutGroups.id))
    .where(
      and(
        query.status ? inArray(rolloutGroups.status, query.status) : undefined,
        query.env ? eq(tasks.env, query.env) : undefined,
        query.policyVersionId ? eq(rolloutGroups.policyVersionId, query.policyVersionId) : undefined,
        textMatch,
      ),
    )
    .groupBy(rolloutGroups.id, tasks.env, tasks.key, policyVersions.adapterName)
    .having(having)
    .orderBy(desc(rolloutGroups.createdAt), desc(rolloutGroups.id))
    .limit(query.limit)
    .offset(query.offset);
  const number = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return rows.map((row) => ({
    ...row,
    started: Number(row.started),
    ended: Number(row.ended),
    rewarded: Number(row.rewarded),
    meanReward: number(row.meanReward),
    minReward: number(row.minReward),
    maxReward: number(row.maxReward),
  }));
}

export interface GroupFilterOptions {
  readonly envs: string[];
  /** Versions that sampled at least one group, by policy then version. */
  readonly versions: { readonly id: string; readonly adapterName: string }[];
}

/** What the console's group filters offer: the environments and versions that have groups. */
export async function groupFilterOptions(db: StoreDb): Promise<GroupFilterOptions> {
  const envs = await db
    .selectDistinct({ env: tasks.env })
    .from(tasks)
    .innerJoin(rolloutGroups, eq(rolloutGroups.taskId, tasks.id))
    .orderBy(tasks.env);
  const versions = await db
    .selectDistinct({
      id: policyVersions.id,
      adapterName: policyVersions.adapterName,
      policyId: policyVersions.policyId,
      version: policyVersions.version,
    })
    .from(policyVersions)
    .innerJoin(rolloutGroups, eq(rolloutGroups.policyVersionId, policyVersions.id))
    .orderBy(policyVersions.policyId, policyVersions.version);
  return {
    envs: envs.map((row) => row.env),
    versions: versions.map((row) => ({ id: row.id, adapterName: row.adapterName })),
  };
}
