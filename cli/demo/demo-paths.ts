// Where each piece of a demo run lives under its data directory (`--data-dir`, default .edgerl/demo).
import { join } from 'node:path';

/** Where each piece lives under the data directory. */
export function demoPaths(dataDir: string) {
  return {
    dataDir,
    model: join(dataDir, 'model'),
    store: join(dataDir, 'pgdata'),
    train: join(dataDir, 'train'),
    adapters: join(dataDir, 'train', 'adapters'),
    demonstrations: join(dataDir, 'demonstrations.jsonl'),
    /** The copy probe's held-out demonstrations (cli/demo/copy-probe.ts). */
    probeDemonstrations: join(dataDir, 'probe-demonstrations.jsonl'),
    /** The console's static export (console/export/), in place of a report page. */
    console: join(dataDir, 'console'),
    summary: join(dataDir, 'summary.json'),
  };
}
export type DemoPaths = ReturnType<typeof demoPaths>;
