// The sweep over rollout episodes whose runner stopped: each stale one (its lease expired: its runner
// stopped beating, or a fresh slot's first runner never came) is either taken over by the sweeping runner, to be resumed from its
// stored turns, or ended as `error` with a reason an operator can read in SQL (taken over too often,
// or too old). Rows are locked FOR UPDATE SKIP LOCKED, so two sweeps never take the same episode and
// a runner mid-append is skipped. Ending the last episode of a group completes the group
// (finishTrajectory); a running group whose episodes have all ended is completed here too. Only
// rollout slots carry a lease (start-trajectory.ts' awaitRunnerSeconds), and only rows whose writer is
// `runner` are swept: trajectories an outside agent drives through the proxy never are.
import { and, asc, eq, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { leaseOwner, leaseSeconds, nonNegativeInt4 } from './fields.ts';
import { finishTrajectory } from './finish-trajectory.ts';
import { parseInput } from './parse-input.ts';
import { leaseExpiry } from './trajectory-leases.ts';

/**
 * Which running episodes a sweep may take: `stale` ones only (the periodic sweep, another edge's
 * episodes), `stale-or-own` adds those the sweeping runner held before (a restart under a stable
 * name), `all` takes every one (an embedded store, which one process owns: nobody else runs them).
 */
export const sweepScopes = ['stale', 'stale-or-own', 'all'] as const;
export type SweepScope = (typeof sweepScopes)[number];

export const sweepTrajectoriesSchema = z.object({
  runner: leaseOwner,
  leaseSeconds,
  scope: z.enum(sweepScopes).default('stale'),
  /** A stale episode already taken over this many times is ended instead of resumed again. */
  maxResumes: nonNegativeInt4,
  /** A stale episode started longer ago than this (seconds) is ended instead of resumed. */
  maxAgeSeconds: z
    .number()
    .positive()
    .max(365 * 86_400),
  limit: z.number().int().min(1).max(10_000).default(1000),
});
export type SweepTrajectoriesInput = z.input<typeof sweepTrajectoriesSchema>;

export interface SweptEpisode {
  readonly groupId: string;
  readonly trajectoryId: string;
}

export interface SweepResult {
  /** Episodes now leased to the runner, to dispatch (each resumes from its stored turns). */
  readonly taken: SweptEpisode[];
  /** Episodes ended as `error`, with the reason stored as their `error_reason`. */
  readonly ended: (SweptEpisode & { readonly reason: string })[];
  /** Groups this sweep moved to `complete`. */
  readonly completedGroups: string[];
}

export async function sweepTrajectories(db: StoreDb, input: SweepTrajectoriesInput): Promise<SweepResult> {
  const sweep = parseInput(sweepTrajectoriesSchema, input, 'sweepTrajectories');
  return db.transaction(async (tx) => {
    const stale = lt(trajectories.leaseExpiresAt, sql`now()`);
    const scope = {
      stale,
      'stale-or-own': or(
        stale,
        and(eq(trajectories.runner, sweep.runner), isNotNull(trajectories.leaseExpiresAt)),
      ),
      all: isNotNull(trajectories.leaseExpiresAt),
    } satisfies Record<SweepScope, unknown>;
    const candidates = await tx
      .select({
        trajectoryId: trajectories.id,
        groupId: trajectories.groupId,
        runner: trajectories.runner,
        resumes: trajectories.resumes,
        tooOld: sql<boolean>`${trajectories.startedAt} < now() - ${sweep.maxAgeSeconds}::double precision * interval '1 second'`,
      })
      .from(trajectories)
      .innerJoin(rolloutGroups, eq(rolloutGroups.id, trajectories.groupId))
      .where(
        and(
          eq(trajectories.status, 'running'),
          eq(rolloutGroups.status, 'running'),
          // Only rollout slots: ending any other row as a runner is refused (trajectory-access.ts),
          // which would fail the whole sweep, every time, over one row that is not a runner's.
          eq(trajectories.writer, 'runner'),
          scope[sweep.scope],
        ),
      )
      .orderBy(asc(trajectories.startedAt), asc(trajectories.id))
      .limit(sweep.limit)
      .for('update', { of: trajectories, skipLocked: true });
    const taken: SweptEpisode[] = [];
    const ended: (SweptEpisode & { reason: string })[] = [];
    const completedGroups = new Set<string>();
    for (const row of candidates) {
      const episode = { groupId: row.groupId as string, trajectoryId: row.trajectoryId };
      const reason = endReason(row, sweep);
      if (reason === undefined) {
        taken.push(episode);
        continue;
      }
      const finished = await finishTrajectory(tx, {
        trajectoryId: row.trajectoryId,
        status: 'error',
        errorReason: reason,
        metadata: { endedBy: sweep.runner },
        // The edge ends a slot of its own kind (trajectory-access.ts): only runner rows carry leases.
        writer: 'runner',
      });
      if (finished.groupCompleted) completedGroups.add(episode.groupId);
      ended.push({ ...episode, reason });
    }
    if (taken.length > 0) {
      await tx
        .update(trajectories)
        .set({
          runner: sweep.runner,
          heartbeatAt: sql`now()`,
          leaseExpiresAt: leaseExpiry(sweep.leaseSeconds),
          // Only a takeover from a runner that had it counts; the first claim of a lost slot does not.
          resumes: sql`${trajectories.resumes} + case when ${trajectories.runner} is null then 0 else 1 end`,
        })
        .where(
          inArray(
            trajectories.id,
            taken.map((episode) => episode.trajectoryId),
          ),
        );
    }
    for (const groupId of await completeEndedGroups(tx)) completedGroups.add(groupId);
    return { taken, ended, completedGroups: [...completedGroups].sort() };
  });
}

function endReason(
  row: { runner: string | null; resumes: number; tooOld: boolean },
  sweep: z.output<typeof sweepTrajectoriesSchema>,
): string | undefined {
  if (row.tooOld) {
    return `abandoned: started more than ${sweep.maxAgeSeconds} s ago and its runner (${row.runner ?? 'none'}) stopped; too old to resume`;
  }
  if (row.runner !== null && row.resumes >= sweep.maxResumes) {
    return `abandoned: its runner stopped ${row.resumes + 1} time(s) (last ${row.runner}); resumed at most ${sweep.maxResumes} time(s)`;
  }
  return undefined;
}

/** Running groups whose every slot has ended (left so by an older edge or a manual fix): complete now. */
async function completeEndedGroups(tx: StoreDb): Promise<string[]> {
  const completed = await tx
    .update(rolloutGroups)
    .set({ status: 'complete', completedAt: sql`now()` })
    .where(
      and(
        eq(rolloutGroups.status, 'running'),
        sql`${rolloutGroups.size} <= (select count(*) from ${trajectories} where ${trajectories.groupId} = ${rolloutGroups.id} and ${trajectories.status} <> 'running')`,
      ),
    )
    .returning({ id: rolloutGroups.id });
  return completed.map((row) => row.id);
}
