// `edgerl train --sft`'s step source: supervised warm-up of the same adapter before RL. Chosen
// trajectories (finished, reward at least a threshold) and/or demonstrations from a JSONL file are
// rendered like RL sequences (stored sampled ids spliced in, assistant tokens masked) and trained with
// next-token negative log-likelihood for a few epochs, in seeded shuffled batches; the driver
// (drive-cycle.ts) checkpoints and publishes them as it does a GRPO cycle (no groups are consumed).
// Leaves out packing and learning-rate schedules.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { chatMessageSchema, toolSpecSchema } from '../../protocol/chat.ts';
import { formatIssues } from '../../protocol/format-issues.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { TrainingSequence } from '../engine/training-sequence.ts';
import { type BuiltBatch, buildBatch, type TrajectoryInput } from './build-batch.ts';
import type { StepSource } from './step-source.ts';
import { trajectoryNotes } from './prepare-step.ts';
import { sftOrder } from './sft-order.ts';
import { sftRecordMetrics } from './step-summary.ts';
import { toolsMissingLine } from './stored-tools.ts';
import { storedTrajectoryInput } from './stored-trajectory-input.ts';
import type { TrainerSession } from './trainer-session.ts';

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

export function sftSteps(hooks: SftHooks = {}): StepSource {
  let batch: BuiltBatch | undefined;
  let orderSeed = 0;
  let epoch = 1;
  let order: TrainingSequence[] = [];
  let at = 0;
  return {
    mode: 'sft',
    // Demonstrations are not in the store: only stored trajectories get notes.
    keepNote: (trajectoryId) => /^[0-9a-f-]{36}$/.test(trajectoryId),
    async next({ session }, lineage, stepsTaken) {
      const { config } = session;
      if (!batch) {
        // Gathered at the first step, not before: a cycle that only publishes an earlier run's
        // checkpoint needs no data.
        batch = await sftBatch(session, hooks);
        // A resumed lineage (a second --sft on the same adapter) gets other orders than its first run.
        orderSeed = config.seed + lineage.step;
        order = sftOrder(batch.sequences, orderSeed, epoch);
      }
      const built = batch;
      if (stepsTaken > 0 && (await hooks.afterStep?.(lineage.step, stepsTaken)) === 'stop') {
        return { kind: 'done', lineage, found: {} };
      }
      if (at >= order.length) {
        epoch += 1;
        if (epoch > config.sft.epochs) return { kind: 'done', lineage, found: {} };
        order = sftOrder(built.sequences, orderSeed, epoch);
        at = 0;
      }
      const chunk = order.slice(at, at + config.sft.sequencesPerStep);
      at += chunk.length;
      const stepEpoch = epoch;
      // The run's notes are the whole batch's, gathered with the first step.
      const found = stepsTaken === 0 ? { notes: trajectoryNotes(built) } : {};
      return {
        kind: 'step',
        lineage,
        found,
        step: {
          sequences: chunk,
          objective: { kind: 'sft' },
          learningRate: config.sft.learningRate,
          groupIds: [],
          metrics: (result) =>
            sftRecordMetrics({
              batch: { ...built, sequences: chunk },
              result,
              maxGradNorm: config.loss.maxGradNorm,
              learningRate: config.sft.learningRate,
              epoch: stepEpoch,
            }),
        },
      };
    },
  };
}

/** The chosen trajectories and demonstrations, rendered (and prepared); refuses an empty batch, saying why. */
async function sftBatch(session: TrainerSession, hooks: SftHooks): Promise<BuiltBatch> {
  const { config, deps } = session;
  const rendered = buildBatch(session.tokenizer, await gatherData(session), {
    vocabSize: session.engine.model.vocabSize,
    maxTokens: session.maxTokens,
  });
  const batch = hooks.prepare ? { ...rendered, sequences: rendered.sequences.map(hooks.prepare) } : rendered;
  for (const skip of batch.skipped)
    deps.progress.line(`${skip.trajectoryId} left out (${skip.reason}): ${skip.detail}`);
  if (batch.sequences.length === 0) {
    throw new Error(
      `nothing to train on: no trajectory with ${config.sft.rewardField} reward ≥ ${config.sft.minReward}` +
        `${config.sft.env ? ` in ${config.sft.env}` : ''}${config.sft.demonstrationsFile ? ' and no usable demonstration' : ''}` +
        ' (lower --min-reward, try --sft-reward verifier, or pass --demonstrations FILE)',
    );
  }
  deps.progress.line(`SFT on ${batch.sequences.length} sequence(s) for ${config.sft.epochs} epoch(s)`);
  return batch;
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
