// How the trainer retries groups the judge failed to score, across cycles and runs: the zod slice of
// the train config. The backoff itself is protocol/score-retry.ts; the store applies it when it marks a
// group unscored, and claims the group again once its `next_score_at` has passed.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween, numberWhere } from '../../protocol/config-fields.ts';
import { defaultScoreRetry } from '../../protocol/score-retry.ts';

const section = 'Rewards and advantages';
const source = 'protocol/score-retry.ts (doubling with a cap and jitter, as AWS recommends)';

export const scoreRetrySettingsSchema = z
  .strictObject({
    maxAttempts: documented(intBetween(1, 1000).default(defaultScoreRetry.maxAttempts), {
      doc: 'judgings a group gets across runs; after the last failure it ends failed (score-attempts-exhausted)',
      source,
      flag: 'score-attempts',
      arg: 'N',
      section,
    }),
    baseSeconds: documented(
      numberWhere((seconds) => seconds >= 0 && seconds <= 86_400, 'between 0 and 86400').default(
        defaultScoreRetry.baseSeconds,
      ),
      {
        doc: 'wait after a group’s first failed judging, seconds; doubles after each further failure (half of it jittered)',
        source,
        flag: 'score-retry-seconds',
        arg: 'S',
        section,
      },
    ),
    capSeconds: documented(
      numberWhere((seconds) => seconds >= 0 && seconds <= 7 * 86_400, 'between 0 and 604800').default(
        defaultScoreRetry.capSeconds,
      ),
      {
        doc: 'longest wait between judgings of a group, seconds',
        source,
        flag: 'score-retry-cap-seconds',
        arg: 'S',
        section,
      },
    ),
  })
  .prefault({});

export type ScoreRetrySettings = z.output<typeof scoreRetrySettingsSchema>;
