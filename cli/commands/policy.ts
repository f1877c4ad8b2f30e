// `edgerl policy create | list | show`: policies as a first-class thing. A policy is created with its
// base weights as version 0, the default (db/create-policy-with-base.ts), so rollouts can route to it
// before any training; list and show read the lineage the console's policies page reads.
import { createPolicyWithBase } from '../../db/create-policy-with-base.ts';
import type { PolicyLineage } from '../../db/store.ts';
import { defineCommand, stringFlag, UsageError } from '../command.ts';
import { onePositional, databaseUrlOption, databaseUrlUsage, withAbStore } from './ab-store.ts';

const createUsage = `Usage: edgerl policy create NAME --base-model MODEL [--json] [--database-url URL]

Creates the policy NAME with its base weights as version 0 (NAME@0), published and the default, so
rollouts and the recording proxy can route to NAME at once; \`edgerl train --policy NAME\` trains it.

Options:
  --base-model MODEL    the base model's name on the inference endpoint (what vLLM or
                        edgerl serve-model serves it as, e.g. its --served-model-name)
  --json                print the policy as JSON
${databaseUrlUsage}`;

export const policyCreateCommand = defineCommand({
  usage: createUsage,
  options: { 'base-model': { type: 'string' }, json: { type: 'boolean' }, ...databaseUrlOption },
  positionals: true,
  async run({ values, positionals, env, stdout }) {
    const name = onePositional(positionals, 'policy name', 'edgerl policy create NAME --base-model MODEL');
    const baseModel = stringFlag(values, 'base-model');
    if (!baseModel?.trim()) {
      throw new UsageError(
        '--base-model is required: the name the inference endpoint serves the base model as',
      );
    }
    const policy = await withAbStore({ values, env }, (store) =>
      createPolicyWithBase(store, { name, baseModel: baseModel.trim() }),
    );
    stdout.write(
      values.json
        ? `${JSON.stringify(policy, null, 2)}\n`
        : `created policy ${policy.name} (base ${policy.baseModel}); its default is ${policy.name}@0\n`,
    );
    return 0;
  },
});

export const policyListCommand = defineCommand({
  usage: `Usage: edgerl policy list [--json] [--database-url URL]

One line per policy: its base model, its default version and how many versions it has.

Options:
  --json                print JSON (each policy with its versions)
${databaseUrlUsage}`,
  options: { json: { type: 'boolean' }, ...databaseUrlOption },
  async run({ values, env, stdout }) {
    const lineages = await withAbStore({ values, env }, (store) => store.policyLineage());
    if (values.json) {
      stdout.write(`${JSON.stringify(lineages.map(summary), null, 2)}\n`);
      return 0;
    }
    if (lineages.length === 0) {
      stdout.write('no policies yet; create one with edgerl policy create NAME --base-model MODEL\n');
      return 0;
    }
    const rows = [
      ['policy', 'base model', 'default', 'versions'],
      ...lineages.map((lineage) => {
        const row = summary(lineage);
        return [row.name, row.baseModel, row.defaultVersion ?? '-', String(row.versions)];
      }),
    ];
    stdout.write(table(rows));
    return 0;
  },
});

export const policyShowCommand = defineCommand({
  usage: `Usage: edgerl policy show NAME [--json] [--database-url URL]

The policy's versions in order (the default marked *), with the state of the run that trained each.

Options:
  --json                print JSON (the policy, its versions and its default's history)
${databaseUrlUsage}`,
  options: { json: { type: 'boolean' }, ...databaseUrlOption },
  positionals: true,
  async run({ values, positionals, env, stdout }) {
    const name = onePositional(positionals, 'policy name', 'edgerl policy show NAME');
    const lineages = await withAbStore({ values, env }, (store) => store.policyLineage());
    const lineage = lineages.find((candidate) => candidate.policy.name === name);
    if (!lineage) {
      throw new UsageError(`no policy named "${name}"; edgerl policy list shows the policies there are`);
    }
    if (values.json) {
      stdout.write(`${JSON.stringify(lineage, null, 2)}\n`);
      return 0;
    }
    const { policy, versions } = lineage;
    const rows = [
      ['', 'version', 'status', 'trained by run', 'created'],
      ...versions.map((version) => [
        version.id === policy.defaultVersionId ? '*' : '',
        version.adapterName,
        version.status,
        version.trainingRunStatus ?? (version.version === 0 ? 'base' : '-'),
        version.createdAt.toISOString().slice(0, 16).replace('T', ' '),
      ]),
    ];
    stdout.write(`policy ${policy.name} (base ${policy.baseModel})\n${table(rows)}`);
    return 0;
  },
});

function summary({ policy, versions }: PolicyLineage) {
  const current = versions.find((version) => version.id === policy.defaultVersionId);
  return {
    name: policy.name,
    baseModel: policy.baseModel,
    defaultVersion: current?.adapterName ?? null,
    versions: versions.length,
  };
}

function table(rows: readonly (readonly string[])[]): string {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return `${rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
