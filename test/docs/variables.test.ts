// docs/configuration.md is the one table of variables: it must list every variable a command's config
// schema reads (with its flag) and every former name beside its current one, so a new setting or a
// rename cannot leave the page behind.
import { describe, expect, it } from 'vitest';
import { consoleSchema } from '../../cli/commands/console.ts';
import { edgeNodeSchema } from '../../cli/commands/edge.ts';
import { fleetFlagsSchema } from '../../cli/commands/fleet-flags.ts';
import { importSchema } from '../../cli/commands/import.ts';
import { demoConfigSchema } from '../../cli/demo/demo-config.ts';
import { trainJobSchema } from '../../cli/train/train-job-flags.ts';
import { edgeConfigSchema } from '../../edge/edge-config.ts';
import { configFields } from '../../protocol/config-docs.ts';
import { renamedVariables } from '../../protocol/config-renames.ts';
import { serveConfigSchema } from '../../serve/serve-config.ts';
import { trainConfigSchema } from '../../trainer/train/train-config.ts';
import { readDoc } from './doc-files.ts';

const schemas = [
  edgeConfigSchema,
  edgeNodeSchema,
  trainConfigSchema,
  trainJobSchema,
  fleetFlagsSchema,
  serveConfigSchema,
  demoConfigSchema,
  consoleSchema,
  importSchema,
];

/** The variables table's rows, keyed by the variable in the first column. */
function variableRows(): Map<string, string> {
  const page = readDoc('docs/configuration.md');
  const section = page.slice(page.indexOf('## Variables'), page.indexOf('## Former names'));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const name = /^\| `([A-Z_]+)`/.exec(line)?.[1];
    if (name) rows.set(name, line);
  }
  return rows;
}

describe('docs/configuration.md', () => {
  const rows = variableRows();

  it('lists every variable a config schema reads, with its flag', () => {
    const fields = schemas.flatMap((schema) => configFields(schema));
    expect(fields.length).toBeGreaterThan(30);
    for (const { doc } of fields) {
      if (!doc.env) continue;
      const row = rows.get(doc.env);
      expect(row, `${doc.env} is missing from the table`).toBeDefined();
      if (doc.flag) expect(row, `${doc.env}'s row lacks --${doc.flag}`).toContain(`\`--${doc.flag}\``);
    }
  });

  it('lists every renamed variable with its former name', () => {
    for (const [former, current] of Object.entries(renamedVariables)) {
      expect(rows.get(current), `${current} is missing from the table`).toContain(`\`${former}\``);
    }
  });
});
