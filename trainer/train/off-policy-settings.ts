// Off-policy data, as the zod slice of the train config: how many versions behind the head a group
// may have been sampled and still be trained on, and the correction applied to what is trained
// (trainer/grpo/rollout-correction.ts). Staleness arises whenever rollouts and training overlap
// (`--continuous`), and in any backlog a trainer works through while it publishes versions.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween, numberWhere, oneOf } from '../../protocol/config-fields.ts';
import { logRatioBound, rolloutCorrectionKinds } from '../grpo/rollout-correction-kinds.ts';

export const offPolicySection = 'Off-policy data';

export const offPolicySettingsSchema = z
  .strictObject({
    maxOffPolicySteps: documented(intBetween(0, 1_000_000).default(4), {
      doc: 'skip groups sampled more than N versions behind the head (the version being trained from); 0 trains only on-policy groups. Skipped groups end `trained` with status_reason `stale: …` and are counted in `groups/stale`',
      source:
        "OpenPipe ART's PipelineTrainer max_steps_off_policy (4; AReaL's max_head_offpolicyness example is 4 too, prime-rl's max_async_level 2)",
      flag: 'max-off-policy-steps',
      arg: 'N',
      section: offPolicySection,
    }),
    correction: documented(oneOf(rolloutCorrectionKinds).nullable().default(null), {
      doc: "tis: weight each trained token's loss by min(π_trainer / π_sampler, --is-cap), π_sampler from the recorded sampling logprobs, and take the clipped ratio against the trainer's own (decoupled PPO); none: the ratio against the sampler's, as before",
      shownDefault: 'tis with --continuous, none otherwise',
      source:
        'truncated importance sampling (Yao et al. 2025, fengyao.notion.site/off-policy-rl); verl rollout correction',
      flag: 'rollout-correction',
      arg: 'KIND',
      section: offPolicySection,
    }),
    isCap: documented(
      numberWhere((cap) => cap >= 1 && cap < Math.exp(logRatioBound), 'at least 1 and below e^20').default(2),
      {
        doc: 'the truncation C of the importance weight: no token weighs more than C',
        source:
          "verl rollout correction's token-level threshold 2.0 (verl #3694) and ms-swift's rollout_importance_sampling_threshold default 2.0",
        flag: 'is-cap',
        arg: 'C',
        section: offPolicySection,
      },
    ),
  })
  .prefault({});

export type OffPolicySettings = z.output<typeof offPolicySettingsSchema>;
