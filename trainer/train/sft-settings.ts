// The supervised warm-up's settings (which trajectories, demonstrations, epochs, batch, rate), as the
// zod slice of the train config. The SFT loop itself is sft.ts.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { finiteNumber, intBetween, numberWhere, oneOf } from '../../protocol/config-fields.ts';

export const sftRewardFields = ['final', 'verifier'] as const;
export type SftRewardField = (typeof sftRewardFields)[number];

/** The usage text's heading of the SFT flags (--sft itself is the train config's `mode`). */
export const sftSection = 'SFT (--sft: next-token loss on assistant tokens, the warm start before RL)';
const section = sftSection;

export const sftSettingsSchema = z
  .strictObject({
    minReward: documented(finiteNumber().default(1), {
      doc: 'train on trajectories whose reward is at least this',
      source: 'a verifier\'s "solved"',
      flag: 'min-reward',
      arg: 'X',
      section,
    }),
    rewardField: documented(oneOf(sftRewardFields).default('final'), {
      doc: "which stored reward to compare: the trainer's final_reward or verifier_reward",
      flag: 'sft-reward',
      arg: 'FIELD',
      section,
    }),
    env: documented(z.string().optional(), {
      doc: "only this environment's trajectories",
      shownDefault: 'any',
      flag: 'env',
      arg: 'NAME',
      section,
    }),
    limit: documented(intBetween(1, 100_000).default(1000), {
      doc: 'most trajectories read from the store',
      source: 'an edgerl choice',
      flag: 'sft-limit',
      arg: 'N',
      section,
    }),
    demonstrationsFile: documented(z.string().optional(), {
      doc: 'JSONL of {"messages": [...], "tools": [...]} to train on too (or alone, when no trajectory qualifies)',
      flag: 'demonstrations',
      arg: 'FILE',
      section,
    }),
    epochs: documented(intBetween(1, 1000).default(3), {
      doc: 'passes over the data',
      source: "transformers' TrainingArguments.num_train_epochs",
      flag: 'epochs',
      arg: 'N',
      section,
    }),
    sequencesPerStep: documented(intBetween(1, 10_000).default(8), {
      doc: 'sequences per optimiser step',
      source: "transformers' per_device_train_batch_size",
      flag: 'sft-batch',
      arg: 'N',
      section,
    }),
    learningRate: documented(numberWhere((rate) => rate > 0 && Number.isFinite(rate), '> 0').default(2e-4), {
      doc: 'AdamW learning rate',
      source: "QLoRA's rate for 7B–13B models (arXiv:2305.14314, App. B)",
      flag: 'sft-lr',
      arg: 'X',
      section,
    }),
  })
  .prefault({});

export type SftSettings = z.output<typeof sftSettingsSchema>;
