// `edgerl ab rollback POLICY`: undoes the policy's latest promote that has not been undone, restoring
// the default version it replaced. Repeating it steps further back through the promotes.
import { defineCommand } from '../command.ts';
import { fleetFromEnv, onePositional, databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';

export const abRollbackCommand = defineCommand({
  usage: `Usage: edgerl ab rollback POLICY [--database-url URL]

Restores the default version POLICY had before its latest edgerl ab promote that is not yet undone;
run it again to go back one more promote. Refused when the default was since changed by other means.

Options:
${databaseUrlUsage}`,
  options: { ...databaseUrlOption },
  positionals: true,
  async run({ values, positionals, env, stdout }) {
    const policyName = onePositional(positionals, 'policy name', 'edgerl ab rollback POLICY');
    const result = await withAbStore({ values, env }, async (store) => {
      const policy = await store.getPolicy({ policyName });
      return store.rollbackDefaultVersion({ policyId: policy.id, ...fleetFromEnv(env) });
    });
    stdout.write(
      `${result.policyName}: default version is now ${result.to.adapterName} again (rolled back from ${result.from.adapterName})\n`,
    );
    return 0;
  },
});
