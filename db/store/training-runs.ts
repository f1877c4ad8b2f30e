// Training runs and their steps: start a run, record each optimiser step's metrics (and the groups it
// trained on), finish the run.
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { metadataSchema, metricsSchema } from '../schema/json.ts';
import { type TrainingRun, trainingRuns } from '../schema/policies.ts';
import { type TrainingStep, trainingSteps } from '../schema/training-steps.ts';
import type { StoreDb } from '../store-db.ts';
import { id, nonNegativeInt4 } from './fields.ts';
import { parseInput } from './parse-input.ts';

const startTrainingRunSchema = z.object({
  policyId: id,
  baseVersionId: id.optional(),
  /** The trainer's resolved configuration. */
  config: metadataSchema.optional(),
});
export type StartTrainingRunInput = z.input<typeof startTrainingRunSchema>;

export async function startTrainingRun(db: StoreDb, input: StartTrainingRunInput): Promise<TrainingRun> {
  const run = parseInput(startTrainingRunSchema, input, 'startTrainingRun');
  const [row] = await db
    .insert(trainingRuns)
    .values({ policyId: run.policyId, baseVersionId: run.baseVersionId ?? null, config: run.config ?? {} })
    .returning();
  if (!row) throw new Error('insert returned no row');
  return row;
}

const stepTime = z.iso
  .datetime({ offset: true })
  .transform((text) => new Date(text))
  .refine((date) => !Number.isNaN(date.getTime()), 'not a time');

const recordTrainingStepSchema = z
  .object({
    trainingRunId: id,
    step: nonNegativeInt4,
    metrics: metricsSchema,
    groupIds: z.array(id).max(10_000).optional(),
    /** When the step's computation began and ended (ISO 8601), by the trainer's clock. */
    startedAt: stepTime.optional(),
    finishedAt: stepTime.optional(),
  })
  .refine((step) => !(step.startedAt && step.finishedAt && step.finishedAt < step.startedAt), {
    path: ['finishedAt'],
    message: 'before startedAt',
  });
export type RecordTrainingStepInput = z.input<typeof recordTrainingStepSchema>;

/** Records one step of a running run; a step number recorded before is a `conflict`. */
export async function recordTrainingStep(db: StoreDb, input: RecordTrainingStepInput): Promise<TrainingStep> {
  const step = parseInput(recordTrainingStepSchema, input, 'recordTrainingStep');
  return db.transaction(async (tx) => {
    const [run] = await tx
      .select({ status: trainingRuns.status })
      .from(trainingRuns)
      .where(eq(trainingRuns.id, step.trainingRunId))
      .for('share');
    if (!run) throw new StoreError('not-found', `training run ${step.trainingRunId} does not exist`);
    if (run.status !== 'running') {
      throw new StoreError(
        'conflict',
        `training run ${step.trainingRunId} is ${run.status}; it takes no more steps`,
      );
    }
    const [row] = await tx
      .insert(trainingSteps)
      .values({
        trainingRunId: step.trainingRunId,
        step: step.step,
        metrics: step.metrics,
        groupIds: step.groupIds ?? [],
        startedAt: step.startedAt ?? null,
        finishedAt: step.finishedAt ?? null,
      })
      .onConflictDoNothing()
      .returning();
    if (!row) {
      throw new StoreError(
        'conflict',
        `step ${step.step} of training run ${step.trainingRunId} is already recorded`,
      );
    }
    return row;
  });
}

const finishTrainingRunSchema = z
  .object({
    trainingRunId: id,
    /** finished: the trainer's normal end; failed: an error; interrupted: a signal stopped it. */
    status: z.enum(['finished', 'failed', 'interrupted']),
    errorReason: z.string().min(1).max(2000).optional(),
  })
  .refine((finish) => finish.status !== 'finished' || !finish.errorReason, {
    path: ['errorReason'],
    message: 'not for status "finished"',
  })
  .refine((finish) => finish.status !== 'failed' || finish.errorReason, {
    path: ['errorReason'],
    message: 'required when status is "failed"',
  });
export type FinishTrainingRunInput = z.input<typeof finishTrainingRunSchema>;

export async function finishTrainingRun(db: StoreDb, input: FinishTrainingRunInput): Promise<TrainingRun> {
  const finish = parseInput(finishTrainingRunSchema, input, 'finishTrainingRun');
  const [row] = await db
    .update(trainingRuns)
    .set({ status: finish.status, errorReason: finish.errorReason ?? null, finishedAt: sql`now()` })
    .where(and(eq(trainingRuns.id, finish.trainingRunId), eq(trainingRuns.status, 'running')))
    .returning();
  if (row) return row;
  const [stored] = await db.select().from(trainingRuns).where(eq(trainingRuns.id, finish.trainingRunId));
  if (!stored) throw new StoreError('not-found', `training run ${finish.trainingRunId} does not exist`);
  throw new StoreError('conflict', `training run ${finish.trainingRunId} is already ${stored.status}`);
}
