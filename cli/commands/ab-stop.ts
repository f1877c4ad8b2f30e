// `edgerl ab stop NAME`: the experiment stops taking traffic (the edge refuses requests naming a
// stopped experiment); its trajectories stay, so `edgerl ab report` still works.
import { defineCommand } from '../command.ts';
import { onePositional, databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';

export const abStopCommand = defineCommand({
  usage: `Usage: edgerl ab stop NAME [--database-url URL]

Stops routing to the experiment; requests that name it are refused from then on. Its data stays for
edgerl ab report. Stopping twice is harmless.

Options:
${databaseUrlUsage}`,
  options: { ...databaseUrlOption },
  positionals: true,
  async run({ values, positionals, env, stdout }) {
    const name = onePositional(positionals, 'experiment name', 'edgerl ab stop NAME');
    const { before, after } = await withAbStore({ values, env }, async (store) => {
      const { experiment } = await store.getAbExperiment(name);
      return { before: experiment, after: await store.stopExperiment(experiment.id) };
    });
    const when = after.stoppedAt?.toISOString() ?? 'now';
    stdout.write(
      before.status === 'stopped'
        ? `experiment ${after.name} was already stopped (${when})\n`
        : `stopped experiment ${after.name} at ${when}; the edge routes no more traffic to it\n`,
    );
    return 0;
  },
});
