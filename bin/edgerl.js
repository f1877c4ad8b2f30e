#!/usr/bin/env node
// Entry point of the `edgerl` CLI: registers tsx so the TypeScript sources run as they are
// (no build step between `npm ci` and `npx edgerl`), then hands over to cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
