// `edgerl ab report NAME`: per-arm outcomes and rewards, each arm against the control, and a verdict
// that waits for the experiment's sample size. Text by default, the report object with --json.
import { taskSplits } from '../../protocol/statuses.ts';
import { abRewardSources } from '../../db/store-constants.ts';
import { formatAbReport } from '../../experiments/format-ab-report.ts';
import { loadAbReport } from '../../experiments/load-ab-report.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';
import { onePositional, databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';

export const abReportCommand = defineCommand({
  usage: `Usage: edgerl ab report NAME [--json] [--split train|eval|validation] [--reward SOURCE] [--database-url URL]

Per arm: ended trajectories, mean reward with its 95% confidence interval, success rate where
rewards are 0 or 1, error and truncation rates, mean turns and latency. Each arm is compared with
the control (the first arm) by Welch's t-test (metric reward) or a two-proportion z-test (metric
success); with three or more arms the p-values are Holm-adjusted. The verdict says "not enough data
yet" until every arm has the experiment's number of rewarded trajectories.

Options:
  --json                print the report as JSON (NaN and infinite numbers as null)
  --split S             only trajectories of train, eval or validation tasks (an eval run: edgerl rollout
                        --split eval --experiment NAME)
  --reward SOURCE       auto (default: final_reward, else verifier_reward) | final | verifier | judge
${databaseUrlUsage}`,
  options: {
    json: { type: 'boolean' },
    split: { type: 'string' },
    reward: { type: 'string' },
    ...databaseUrlOption,
  },
  positionals: true,
  async run({ values, positionals, env, stdout }) {
    const name = onePositional(positionals, 'experiment name', 'edgerl ab report NAME');
    const rawSplit = stringFlag(values, 'split');
    const split = taskSplits.find((candidate) => candidate === rawSplit);
    if (rawSplit !== undefined && !split) {
      throw new UsageError(`--split must be one of ${taskSplits.join(', ')}, got "${rawSplit}"`);
    }
    const rawReward = stringFlag(values, 'reward') ?? 'auto';
    const reward = abRewardSources.find((candidate) => candidate === rawReward);
    if (!reward)
      throw new UsageError(`--reward must be one of ${abRewardSources.join(', ')}, got "${rawReward}"`);
    const { report } = await withAbStore({ values, env }, (store) =>
      loadAbReport(store, name, { reward, ...(split ? { split } : {}) }),
    );
    if (values.json) {
      stdout.write(`${JSON.stringify({ ...report, reward, split: split ?? null }, null, 2)}\n`);
    } else {
      const scope = [
        split ? `${split} tasks only` : undefined,
        reward !== 'auto' ? `reward: ${reward}` : undefined,
      ]
        .filter(Boolean)
        .join(', ');
      stdout.write(`${formatAbReport(report)}${scope ? `(${scope})\n` : ''}`);
    }
    return 0;
  },
});
