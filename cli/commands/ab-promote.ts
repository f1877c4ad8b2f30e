// `edgerl ab promote NAME ARM`: the arm's version becomes its policy's default version (what requests
// naming the policy but no version get), the experiment stops, and the change is recorded so that
// `edgerl ab rollback POLICY` can undo it. Promoting against the report's verdict is allowed (people
// decide), but the command says so on stderr.
import { loadAbReport } from '../../experiments/load-ab-report.ts';
import { promoteWarning } from '../../experiments/promote-warning.ts';
import { defineCommand, UsageError } from '../command.ts';
import { fleetFromEnv, databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';

export const abPromoteCommand = defineCommand({
  usage: `Usage: edgerl ab promote NAME ARM [--database-url URL]

ARM is an arm's name (its version's served name, e.g. agent@4) or its version's id. The version
becomes the default of its policy, the experiment stops, and the previous default is remembered:
edgerl ab rollback POLICY restores it. A version ready on no inference replica (of
EDGERL_INFERENCE_REPLICAS, when set) is refused: run edgerl fleet catch-up first.

Options:
${databaseUrlUsage}`,
  options: { ...databaseUrlOption },
  positionals: true,
  async run({ values, positionals, env, stdout, stderr }) {
    if (positionals.length !== 2)
      throw new UsageError('give the experiment and the arm: edgerl ab promote NAME ARM');
    const [name = '', armRef = ''] = positionals;
    const { result, warning } = await withAbStore({ values, env }, async (store) => {
      const { view, report } = await loadAbReport(store, name);
      const arm = view.arms.find(
        (candidate) =>
          candidate.name === armRef ||
          candidate.adapterName === armRef ||
          candidate.policyVersionId === armRef,
      );
      if (!arm) {
        throw new UsageError(
          `experiment ${view.experiment.name} has no arm "${armRef}"; its arms are ${view.arms.map((candidate) => candidate.name).join(', ')}`,
        );
      }
      const warning = promoteWarning(report, arm.name);
      return {
        result: await store.promoteArm({
          experimentId: view.experiment.id,
          armId: arm.id,
          ...fleetFromEnv(env),
        }),
        warning,
      };
    });
    if (warning) stderr.write(`note: ${warning}; promoting as asked\n`);
    const was = result.previous ? `was ${result.previous.adapterName}` : 'had none';
    stdout.write(
      [
        result.change
          ? `${result.policyName}: default version is now ${result.promoted.adapterName} (${was})`
          : `${result.policyName}: ${result.promoted.adapterName} already was the default version`,
        `experiment ${result.experiment.name} is stopped`,
        ...(result.change ? [`undo with: edgerl ab rollback ${result.policyName}`] : []),
        '',
      ].join('\n'),
    );
    return 0;
  },
});
