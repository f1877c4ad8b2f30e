// The GRPO learning-rate schedule (warm-up, then constant or cosine), as the zod slice of the train
// config. The rate it scales is --lr (trainer/grpo/loss-config.ts); the factor is lr-schedule.ts.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween, oneOf } from '../../protocol/config-fields.ts';

export const lrScheduleKinds = ['constant', 'cosine'] as const;
export type LrScheduleKind = (typeof lrScheduleKinds)[number];

const section = 'Learning-rate schedule (GRPO steps, counted from fresh optimiser moments)';

export const lrScheduleSettingsSchema = z
  .strictObject({
    kind: documented(oneOf(lrScheduleKinds).default('constant'), {
      doc: 'after the warm-up: constant, or cosine decay to 0 at --lr-decay-steps',
      source:
        "ART's constant schedule; cosine as in transformers' get_cosine_schedule_with_warmup (SGDR, arXiv:1608.03983)",
      flag: 'lr-schedule',
      arg: 'KIND',
      section,
    }),
    warmupSteps: documented(intBetween(0, 1_000_000).default(0), {
      doc: 'raise the rate linearly over the first K steps (step t of K gets t/K of it); 0: none',
      source:
        "ART: none. A warm-up tames Adam's first steps, when the moments are fresh and every entry moves by about the rate whatever its gradient (RAdam, arXiv:1908.03265 §3)",
      flag: 'lr-warmup-steps',
      arg: 'K',
      section,
    }),
    decaySteps: documented(intBetween(1, 10_000_000).nullable().default(null), {
      doc: 'with --lr-schedule cosine: the last step of the decay, warm-up included (the rate is 0 after it)',
      shownDefault: 'none',
      flag: 'lr-decay-steps',
      arg: 'N',
      section,
    }),
  })
  .superRefine((settings, context) => {
    if (settings.kind !== 'cosine') return;
    if (settings.decaySteps === null)
      context.addIssue({
        code: 'custom',
        path: ['decaySteps'],
        message: '--lr-schedule cosine needs --lr-decay-steps N',
      });
    else if (settings.decaySteps <= settings.warmupSteps)
      context.addIssue({
        code: 'custom',
        path: ['decaySteps'],
        message: `--lr-decay-steps (${settings.decaySteps}) must exceed --lr-warmup-steps (${settings.warmupSteps})`,
      });
  })
  .prefault({});

export type LrScheduleSettings = z.output<typeof lrScheduleSettingsSchema>;
