// `edgerl train --sft`: supervised warm-up of the same adapter before RL. Chosen trajectories (finished,
// reward at least a threshold) and/or demonstrations from a JSONL file are rendered like RL sequences
// (stored sampled ids spliced in, assistant tokens masked) and trained with next-token negative
// log-likelihood for a few epochs, in seeded shuffled batches; then checkpointed and published through
// the same path as a GRPO cycle (no groups are consumed). Leaves out packing and learning-rate schedules.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { chatMessageSchema, toolSpecSchema } from '../../protocol/chat.ts';
import { formatIssues } from '../../protocol/format-issues.ts';
import { sftOrder } from './sft-order.ts';
import { buildBatch, type TrainingSequence, type TrajectoryInput } from './build-batch.ts';
import { type StepRecord, writeCheckpoint } from './checkpoint.ts';
import { finishCheckpoint } from './finish-checkpoint.ts';
import { LeaseKeeper } from './lease-keeper.ts';
import { trajectoryNotes } from './prepare-step.ts';
import { toolsMissingLine } from './stored-tools.ts';
import { storedTrajectoryInput } from './stored-trajectory-input.ts';
import { type CycleReport, finishPendingCheckpoint, reportFinish } from './run-cycle.ts';
import { formatStepLine, sftRecordMetrics } from './step-summary.ts';
import { trainStep } from './train-step.ts';
import type { TrainerSession } from './trainer-session.ts';
import { errorMessage } from '../../protocol/error-message.ts';

const demonstrationSchema = z.object({
  messages: z.array(chatMessageSchema).min(2),
  tools: z.array(toolSpecSchema).optional(),
});

/** Reads a JSONL file of `{messages, tools?}` demonstrations; names the first bad line. */
export async function readDemonstrations(path: string): Promise<TrajectoryInput[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read demonstrations ${path}: ${errorMessage(error)}`);
  }
  const out: TrajectoryInput[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new Error(`${path}:${index + 1}: not JSON`);
    }
    const parsed = demonstrationSchema.safeParse(json);
    if (!parsed.success) throw new Error(`${path}:${index + 1}: ${formatIssues(parsed.error)}`);
    if (!parsed.data.messages.some((message) => message.role === 'assistant')) {
      throw new Error(`${path}:${index + 1}: no assistant message to learn from`);
    }
    out.push({
      trajectoryId: `${path}:${index + 1}`,
      groupId: null,
      messages: parsed.data.messages,
      ...(parsed.data.tools ? { tools: parsed.data.tools } : {}),
      advantage: 1,
    });
  });
  return out;
}

/** What a caller of runSft may add to the fixed epochs. */
export interface SftHooks {
  /**
   * Called after each optimiser step with its number (the lineage's) and how many this run has taken:
   * 'stop' ends the epochs there (a warm start that stops on evidence, cli/demo/warm-start.ts); the
   * checkpoint and publication follow as after the last epoch.
   */
  readonly afterStep?: (step: number, taken: number) => Promise<'continue' | 'stop'>;
  /** Rewrites each rendered sequence before training (the demo weighs the tokens it must copy). */
  readonly prepare?: (sequence: TrainingSequence) => TrainingSequence;
}

export async function runSft(session: TrainerSession, hooks: SftHooks = {}): Promise<CycleReport> {
  const { config, deps } = session;
  const { store, progress } = deps;
  const keeper = new LeaseKeeper({
    renew: (groupIds) =>
      store.renewLease({ owner: config.owner, groupIds, leaseSeconds: config.leaseSeconds }),
    leaseSeconds: config.leaseSeconds,
  });
  try {
    const resumed = await finishPendingCheckpoint(session, keeper);
    if (resumed) return resumed;
    const inputs = await gatherData(session);
    const rendered = buildBatch(session.tokenizer, inputs, {
      vocabSize: session.model.config.vocabSize,
      maxTokens: session.maxTokens,
    });
    const batch = hooks.prepare
      ? { ...rendered, sequences: rendered.sequences.map(hooks.prepare) }
      : rendered;
    for (const skip of batch.skipped)
      progress.line(`${skip.trajectoryId} left out (${skip.reason}): ${skip.detail}`);
    if (batch.sequences.length === 0) {
      throw new Error(
        `nothing to train on: no trajectory with ${config.sft.rewardField} reward ≥ ${config.sft.minReward}` +
          `${config.sft.env ? ` in ${config.sft.env}` : ''}${config.sft.demonstrationsFile ? ' and no usable demonstration' : ''}` +
          ' (lower --min-reward, try --sft-reward verifier, or pass --demonstrations FILE)',
      );
    }
    progress.line(`SFT on ${batch.sequences.length} sequence(s) for ${config.sft.epochs} epoch(s)`);
    const trainingRunId = await session.ensureTrainingRun();
    // A resumed lineage (a second --sft on the same adapter) gets other orders than its first run.
    const orderSeed = config.seed + session.lineage.step;
    const steps: StepRecord[] = [];
    let stopped = false;
    for (let epoch = 1; epoch <= config.sft.epochs && !stopped; epoch++) {
      const order = sftOrder(batch.sequences, orderSeed, epoch);
      for (let at = 0; at < order.length && !stopped; at += config.sft.sequencesPerStep) {
        const chunk = order.slice(at, at + config.sft.sequencesPerStep);
        const step = session.lineage.step + 1;
        const started = performance.now();
        const startedAt = new Date().toISOString();
        const result = await trainStep(session.model, session.adapterName, session.optimizer, chunk, {
          objective: { kind: 'sft' },
          microBatchTokens: config.loss.microBatchTokens,
          maxGradNorm: config.loss.maxGradNorm,
          learningRate: config.sft.learningRate,
          padTokenId: session.tokenizer.padTokenId,
          workers: session.workers,
          onMicroBatch: (done, total, tokens) =>
            progress.microBatch(step, done, total, tokens, (performance.now() - started) / 1000),
        });
        const metrics = sftRecordMetrics({
          batch: { ...batch, sequences: chunk },
          result,
          maxGradNorm: config.loss.maxGradNorm,
          learningRate: config.sft.learningRate,
          epoch,
        });
        session.lineage = { ...session.lineage, step, trainingRunId };
        steps.push({ step, metrics, groupIds: [], startedAt, finishedAt: new Date().toISOString() });
        progress.stepEnd(step, formatStepLine(step, metrics));
        stopped = (await hooks.afterStep?.(step, steps.length)) === 'stop';
      }
    }
    const checkpoint = await writeCheckpoint(config.outputDir, {
      model: session.model,
      adapterName: session.adapterName,
      optimizer: session.optimizer,
      state: {
        formatVersion: 1,
        kind: 'sft',
        step: session.lineage.step,
        trainingRunId,
        policyId: session.policy.id,
        parentVersionId: session.lineage.parentVersionId,
        groupIds: [],
        groupReasons: {},
        // Demonstrations are not in the store: only stored trajectories get notes.
        trajectoryNotes: Object.fromEntries(
          Object.entries(trajectoryNotes(batch)).filter(([id]) => /^[0-9a-f-]{36}$/.test(id)),
        ),
        steps,
        configHash: session.configHash,
        createdAt: new Date().toISOString(),
      },
    });
    session.pending = checkpoint;
    progress.line(`checkpoint ${checkpoint.dir}`);
    const outcome = await finishCheckpoint(session, checkpoint, keeper);
    reportFinish(session, outcome);
    return { ...outcome, steps: steps.length, resumed: false };
  } catch (error) {
    await session.restore().catch(() => undefined);
    throw error;
  } finally {
    keeper.stop();
  }
}

async function gatherData(session: TrainerSession): Promise<TrajectoryInput[]> {
  const { config, deps } = session;
  const { sft } = config;
  const rows = await deps.store.selectTrajectories({
    reward: sft.rewardField,
    minReward: sft.minReward,
    policyId: session.policy.id,
    limit: sft.limit,
    ...(sft.env ? { env: sft.env } : {}),
  });
  const inputs: TrajectoryInput[] = [];
  for (const row of rows) inputs.push(await storedTrajectoryInput(deps.store, row.id, 1));
  const toolsMissing = rows.filter((row) => row.tools === null).length;
  if (toolsMissing > 0) deps.progress.line(toolsMissingLine(toolsMissing));
  if (sft.demonstrationsFile) inputs.push(...(await readDemonstrations(sft.demonstrationsFile)));
  return inputs;
}
