// `edgerl ab list`: experiments, newest first, with their arms, weights and rewarded trajectories.
import { experimentStatuses } from '../../protocol/statuses.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';
import { databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';

export const abListCommand = defineCommand({
  usage: `Usage: edgerl ab list [--status running|stopped] [--json] [--database-url URL]

One line per experiment, newest first: status, metric, the sample size each arm needs, and per arm
its version, share of traffic and rewarded trajectories so far.

Options:
  --status S            only experiments that are running, or stopped
  --json                print JSON
${databaseUrlUsage}`,
  options: { status: { type: 'string' }, json: { type: 'boolean' }, ...databaseUrlOption },
  async run({ values, env, stdout }) {
    const rawStatus = stringFlag(values, 'status');
    const status = experimentStatuses.find((candidate) => candidate === rawStatus);
    if (rawStatus !== undefined && !status) {
      throw new UsageError(`--status must be one of ${experimentStatuses.join(', ')}, got "${rawStatus}"`);
    }
    const listings = await withAbStore({ values, env }, (store) =>
      store.listAbExperiments(status ? { status } : {}),
    );
    if (values.json) {
      stdout.write(`${JSON.stringify(listings, null, 2)}\n`);
      return 0;
    }
    if (listings.length === 0) {
      stdout.write('no experiments yet; start one with edgerl ab create NAME --arm VERSION --arm VERSION\n');
      return 0;
    }
    const rows = [
      ['experiment', 'status', 'policy', 'metric', 'needs', 'arms (share, rewarded)', 'created'],
      ...listings.map(({ experiment, policyName, arms }) => [
        experiment.name,
        experiment.status,
        policyName,
        experiment.metric,
        String(experiment.minSamples),
        arms.map((arm) => `${arm.name} (${(arm.weight * 100).toFixed(0)}%, ${arm.rewarded})`).join(', '),
        experiment.createdAt.toISOString().slice(0, 16).replace('T', ' '),
      ]),
    ];
    const widths =
      rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
    stdout.write(
      `${rows
        .map((row) =>
          row
            .map((cell, column) => cell.padEnd(widths[column] ?? 0))
            .join('  ')
            .trimEnd(),
        )
        .join('\n')}\n`,
    );
    return 0;
  },
});
