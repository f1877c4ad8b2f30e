// Training runs for the console, newest first: each with its policy, the version it started from,
// how many steps it recorded (and the last one's metrics), and the versions it produced. Read-only.
import { and, asc, count, desc, eq, inArray, max, min, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { Metrics } from '../schema/json.ts';
import { policies, policyVersions, type TrainingRun, trainingRuns } from '../schema/policies.ts';
import { trainingSteps } from '../schema/training-steps.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const listTrainingRunsSchema = z.object({
  policyId: id.optional(),
  /** Only these runs (the console's overlay of chosen runs). */
  trainingRunIds: z.array(id).min(1).max(100).optional(),
  limit: z.number().int().min(1).max(1000).default(100),
});
export type ListTrainingRunsInput = z.input<typeof listTrainingRunsSchema>;

export interface TrainingRunListing {
  readonly run: TrainingRun;
  readonly policyName: string;
  /** The served name of the version the run started from; null when it started from none. */
  readonly baseAdapterName: string | null;
  readonly stepCount: number;
  readonly firstStep: number | null;
  readonly lastStep: number | null;
  /** The metrics of its highest step; null before its first. */
  readonly lastMetrics: Metrics | null;
  /** Served names of the versions it produced, in version order. */
  readonly versions: string[];
}

export async function listTrainingRuns(
  db: StoreDb,
  input: ListTrainingRunsInput = {},
): Promise<TrainingRunListing[]> {
  const query = parseInput(listTrainingRunsSchema, input, 'listTrainingRuns');
  const base = alias(policyVersions, 'base_version');
  const runs = await db
    .select({ run: trainingRuns, policyName: policies.name, baseAdapterName: base.adapterName })
    .from(trainingRuns)
    .innerJoin(policies, eq(policies.id, trainingRuns.policyId))
    .leftJoin(base, eq(base.id, trainingRuns.baseVersionId))
    .where(
      and(
        query.policyId ? eq(trainingRuns.policyId, query.policyId) : undefined,
        query.trainingRunIds ? inArray(trainingRuns.id, query.trainingRunIds) : undefined,
      ),
    )
    .orderBy(desc(trainingRuns.startedAt), desc(trainingRuns.id))
    .limit(query.limit);
  if (runs.length === 0) return [];
  const runIds = runs.map((row) => row.run.id);
  const stepStats = await db
    .select({
      trainingRunId: trainingSteps.trainingRunId,
      stepCount: count(),
      firstStep: min(trainingSteps.step),
      lastStep: max(trainingSteps.step),
    })
    .from(trainingSteps)
    .where(inArray(trainingSteps.trainingRunId, runIds))
    .groupBy(trainingSteps.trainingRunId);
  const highest = db
    .select({ runId: trainingSteps.trainingRunId, step: max(trainingSteps.step) })
    .from(trainingSteps)
    .where(inArray(trainingSteps.trainingRunId, runIds))
    .groupBy(trainingSteps.trainingRunId);
  const lastRows = await db
    .select({ trainingRunId: trainingSteps.trainingRunId, metrics: trainingSteps.metrics })
    .from(trainingSteps)
    .where(sql`(${trainingSteps.trainingRunId}, ${trainingSteps.step}) in ${highest}`);
  const produced = await db
    .select({ trainingRunId: policyVersions.trainingRunId, adapterName: policyVersions.adapterName })
    .from(policyVersions)
    .where(inArray(policyVersions.trainingRunId, runIds))
    .orderBy(asc(policyVersions.version));
  const statsByRun = new Map(stepStats.map((row) => [row.trainingRunId, row]));
  const lastByRun = new Map(lastRows.map((row) => [row.trainingRunId, row.metrics]));
  return runs.map(({ run, policyName, baseAdapterName }) => {
    const stats = statsByRun.get(run.id);
    return {
      run,
      policyName,
      baseAdapterName,
      stepCount: Number(stats?.stepCount ?? 0),
      firstStep: stats?.firstStep ?? null,
      lastStep: stats?.lastStep ?? null,
      lastMetrics: lastByRun.get(run.id) ?? null,
      versions: produced.filter((row) => row.trainingRunId === run.id).map((row) => row.adapterName),
    };
  });
}
