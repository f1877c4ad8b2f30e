// Replay of past successes beside each GRPO step, as the zod slice of the train config: how many, how
// much their next-token loss weighs, and what counts as a success. The gathering is replay.ts.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { finiteNumber, intBetween, numberWhere } from '../../protocol/config-fields.ts';

export const replaySection = 'Replay (next-token loss on past successes beside each GRPO step)';
const section = replaySection;

export const replaySettingsSchema = z
  .strictObject({
    sequences: documented(intBetween(0, 10_000).default(0), {
      doc: "past successes added to each GRPO step: the best trajectory of a group trained earlier, one per group, on other groups than the step's (0: none)",
      source:
        'an anchor for behaviour the rounds stop sampling: self-imitation (Oh et al. 2018, arXiv:1806.05635) and PPO-ptx (Ouyang et al. 2022, arXiv:2203.02155) add a supervised term to the RL loss',
      flag: 'replay',
      arg: 'N',
      section,
    }),
    weight: documented(numberWhere((weight) => weight > 0 && Number.isFinite(weight), '> 0').default(1), {
      doc: "weight of the replayed trajectories' token-mean next-token loss, added to the GRPO loss",
      source: 'an edgerl choice, measured in docs/demo.md',
      flag: 'replay-weight',
      arg: 'X',
      section,
    }),
    minReward: documented(finiteNumber().default(1), {
      doc: 'a replayed trajectory has final_reward at least this',
      source: 'a verifier\'s "solved", like --min-reward of --sft',
      flag: 'replay-min-reward',
      arg: 'X',
      section,
    }),
  })
  .prefault({});

export type ReplaySettings = z.output<typeof replaySettingsSchema>;
