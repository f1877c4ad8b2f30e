#!/usr/bin/env node
// Entry point of the `edgerl` CLI: runs the compiled CLI in dist/ (built by `npm ci`, or
// `npm run build:cli`) when it is current, else registers tsx and runs the TypeScript sources, so an
// edit is never answered by a stale build. EDGERL_CLI=source always runs the sources; EDGERL_CLI=compiled
// refuses to fall back (tests, benches). EDGERL_DEBUG says which ran, and why.
import { fileURLToPath } from 'node:url';
import { compiledCli } from './compiled-cli.js';

const mode = process.env.EDGERL_CLI ?? 'auto';
if (!['auto', 'source', 'compiled'].includes(mode)) {
  process.stderr.write(`edgerl: EDGERL_CLI must be auto, source or compiled, got "${mode}"\n`);
  process.exit(2);
}
const compiled =
  mode === 'source'
    ? { stale: 'EDGERL_CLI=source' }
    : compiledCli(fileURLToPath(new URL('../dist', import.meta.url)));
let main;
if ('entry' in compiled) {
  // Stacks point at the sources; reading the maps costs time, so only when they will be printed.
  if (process.env.EDGERL_DEBUG) process.setSourceMapsEnabled(true);
  ({ main } = await import(compiled.entry));
} else if (mode === 'compiled') {
  process.stderr.write(`edgerl: EDGERL_CLI=compiled, but ${compiled.stale}\n`);
  process.exit(2);
} else {
  if (process.env.EDGERL_DEBUG)
    process.stderr.write(`edgerl: running the sources via tsx: ${compiled.stale}\n`);
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/main.ts'));
}
process.exitCode = await main(process.argv.slice(2));
