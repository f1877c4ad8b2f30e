// `edgerl fleet status [--policy NAME]`: where each version is served: one line per version and
// replica from the publications table (state, loads attempted, when it became ready, the last
// error). The same rows are in SQL: `select * from publications`.
import { defineCommand } from '../command.ts';
import { configOptions } from '../flags/config-flags.ts';
import { usageOptions } from '../flags/config-usage.ts';
import { fleetFields, fleetFlags, withFleetStore } from './fleet-flags.ts';

const statusFields = fleetFields.filter((field) =>
  ['policy', 'databaseUrl', 'dataDir'].includes(field.path[0] ?? ''),
);

export const fleetStatusCommand = defineCommand({
  usage: `Usage: edgerl fleet status [--policy NAME] [--json]

One line per policy version and inference replica: its state in the fleet publication (loading,
verified, ready, quarantined), the loads tried there, when it became ready, and the last error.
Requests for a version go only to the replicas where it is ready.

${usageOptions(statusFields)}
  --json                   print the rows as one JSON array (version, replica, state, attempts,
                           readyAt, lastError)`,
  options: { ...configOptions(statusFields), json: { type: 'boolean' } },
  async run({ values, env, stdout }) {
    const flags = fleetFlags({ values, env });
    const rows = await withFleetStore(flags, env, async (store) => {
      const policyId = flags.policy ? (await store.getPolicy({ policyName: flags.policy })).id : undefined;
      return store.listPublications(policyId ? { policyId } : {});
    });
    if (values.json) {
      const list = rows.map((row) => ({
        version: row.adapterName,
        replica: row.replica,
        state: row.state,
        attempts: row.attempts,
        readyAt: row.readyAt?.toISOString() ?? null,
        lastError: row.lastError ?? null,
      }));
      stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      stdout.write('no publications recorded yet\n');
      return 0;
    }
    const table = [
      ['version', 'replica', 'state', 'attempts', 'ready at', 'last error'],
      ...rows.map((row) => [
        row.adapterName,
        row.replica,
        row.state,
        String(row.attempts),
        row.readyAt?.toISOString() ?? '',
        row.lastError ?? '',
      ]),
    ];
    const widths =
      table[0]?.map((_, column) => Math.max(...table.map((line) => (line[column] ?? '').length))) ?? [];
    for (const line of table) {
      stdout.write(
        `${line
          .map((cell, column) => cell.padEnd(widths[column] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
      );
    }
    return 0;
  },
});
