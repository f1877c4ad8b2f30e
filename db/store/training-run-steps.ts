// The steps of some training runs, in step order, for the console's charts: each step's metrics, how
// many groups it trained on, and its staleness: how many policy versions the step's data lagged the
// newest version published when the step was recorded (per group: newest published version number
// minus the version that sampled the group; AReaL's "staleness", arXiv:2505.24298 §4). Read-only.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Metrics } from '../schema/json.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const trainingRunStepsSchema = z.object({
  trainingRunIds: z.array(id).min(1).max(100),
  /** At most this many steps per call, lowest run and step first. */
  limit: z.number().int().min(1).max(100_000).default(20_000),
});
export type TrainingRunStepsInput = z.input<typeof trainingRunStepsSchema>;

export interface TrainingRunStep {
  readonly trainingRunId: string;
  readonly step: number;
  readonly metrics: Metrics;
  readonly groupCount: number;
  /** Mean and largest staleness over the step's groups; null when none had a sampling version or none was published yet. */
  readonly staleness: { readonly mean: number; readonly max: number } | null;
  /** Milliseconds since the epoch. */
  readonly recordedAt: number;
}

interface StepRow {
  trainingRunId: string;
  step: number;
  metrics: Metrics;
  groupCount: number;
  stalenessMean: number | null;
  stalenessMax: number | null;
  recordedAt: number;
}

export async function trainingRunSteps(
  db: StoreDb,
  input: TrainingRunStepsInput,
): Promise<TrainingRunStep[]> {
  const query = parseInput(trainingRunStepsSchema, input, 'trainingRunSteps');
  const ids = sql.join(
    query.trainingRunIds.map((runId) => sql`${runId}::uuid`),
    sql`, `,
  );
  const result = await db.execute(sql`
    select s.training_run_id::text as "trainingRunId", s.step, s.metrics,
      cardinality(s.group_ids) as "groupCount",
      lag.mean as "stalenessMean", lag.max as "stalenessMax",
      (extract(epoch from s.created_at) * 1000)::float8 as "recordedAt"
    from training_steps s
    join training_runs r on r.id = s.training_run_id
    left join lateral (
      select max(v.version) as version from policy_versions v
      where v.policy_id = r.policy_id and v.published_at is not null and v.published_at <= s.created_at
    ) newest on true
    left join lateral (
      select avg(newest.version - pv.version)::float8 as mean, max(newest.version - pv.version) as max
      from unnest(s.group_ids) as g(id)
      join rollout_groups rg on rg.id = g.id
      join policy_versions pv on pv.id = rg.policy_version_id
    ) lag on true
    where s.training_run_id in (${ids})
    order by s.training_run_id, s.step
    limit ${query.limit}`);
  return rowsOf<StepRow>(result).map((row) => ({
    trainingRunId: row.trainingRunId,
    step: Number(row.step),
    metrics: row.metrics,
    groupCount: Number(row.groupCount),
    staleness:
      row.stalenessMean === null || row.stalenessMax === null
        ? null
        : { mean: Number(row.stalenessMean), max: Number(row.stalenessMax) },
    recordedAt: Number(row.recordedAt),
  }));
}
