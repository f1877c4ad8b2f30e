// The replayed part of a GRPO step (`--replay N`): N past successes from the store (the best
// trajectory of groups trained earlier, db/store/replay-trajectories.ts), rendered like any batch and
// trained with next-token loss beside the step's GRPO loss (the engine step's `replay`). RL moves every
// adapter entry each step, also those that hold behaviour the step's groups never sample (a task
// drawn rarely); the replayed successes pull that behaviour back. The store is the memory: a
// scheduled trainer replays what earlier runs trained on as well.
import { buildBatch } from './build-batch.ts';
import type { TrainingSequence } from '../engine/training-sequence.ts';
import { storedTrajectoryInput } from './stored-trajectory-input.ts';
import type { TrainerSession } from './trainer-session.ts';

/** The replayed sequences of the step numbered `step`, none from `excludeGroupIds`. */
export async function replaySequences(
  session: TrainerSession,
  step: number,
  excludeGroupIds: readonly string[],
): Promise<TrainingSequence[]> {
  const { replay } = session.config;
  if (replay.sequences === 0) return [];
  const { store } = session.deps;
  const rows = await store.replayTrajectories({
    policyId: session.policy.id,
    minReward: replay.minReward,
    limit: replay.sequences,
    // The step number: the same step of a rerun replays the same rows; the next one, others.
    salt: `${session.config.seed}:${step}`,
    excludeGroupIds: [...excludeGroupIds],
  });
  const inputs = [];
  for (const row of rows) inputs.push(await storedTrajectoryInput(store, row.id, 1));
  // Trajectories that cannot be rendered are left out here as in any batch; the GRPO part reports its own.
  return buildBatch(session.tokenizer, inputs, {
    vocabSize: session.engine.model.vocabSize,
    maxTokens: session.maxTokens,
  }).sequences;
}
