// `npm run bench:cli [-- --runs N]`: wall time of `edgerl --help`, `edgerl --version` and `edgerl help`
// of the commands whose usage is built from config schemas (train, demo, serve-model, import), the
// compiled CLI (dist/, rebuilt first) beside the sources through tsx (the baseline), with `node -e 0`
// as the floor, all interleaved in one run; and what bin/edgerl.js's staleness check costs. Medians,
// since a shared machine's load comes and goes. Leaves out cold caches.
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compiledCli } from '../bin/compiled-cli.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1)
  throw new Error(`--runs takes a positive integer, got ${values.runs}`);

const bin = fileURLToPath(new URL('../bin/edgerl.js', import.meta.url));
const buildScript = fileURLToPath(new URL('../scripts/build-cli.ts', import.meta.url));
const dist = fileURLToPath(new URL('../dist', import.meta.url));
// help train, demo and serve-model once loaded TensorFlow.js, import the edge app and drizzle.
const calls = [
  ['--help'],
  ['--version'],
  ['help', 'train'],
  ['help', 'demo'],
  ['help', 'serve-model'],
  ['help', 'import'],
] as const;

function wallMs(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return ms;
}

/**
 * A compiled run, rebuilt first (untimed) when a source changed since the last build: in a checkout
 * others are editing, EDGERL_CLI=compiled would otherwise refuse the stale build.
 */
function compiledWallMs(args: readonly string[], env: NodeJS.ProcessEnv): number {
  for (let attempt = 1; ; attempt += 1) {
    if (!('entry' in compiledCli(dist))) buildCli();
    try {
      return wallMs(args, env);
    } catch (error) {
      if (attempt === 3 || !String(error).includes('changed since the build')) throw error;
    }
  }
}

/** `npm run build:cli`, in its own process (bench/ imports nothing from scripts/); says what it built. */
function buildCli(): string {
  return execFileSync(process.execPath, ['--import', 'tsx', buildScript], { encoding: 'utf8' }).trim();
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

console.log(`${buildCli()}; ${runs} runs each, interleaved\n`);

const samples = new Map<string, number[]>();
const record = (key: string, ms: number) => samples.set(key, [...(samples.get(key) ?? []), ms]);
const modes = {
  compiled: { ...process.env, EDGERL_CLI: 'compiled' },
  source: { ...process.env, EDGERL_CLI: 'source' },
} satisfies Record<string, NodeJS.ProcessEnv>;
// One warm-up of each, so tsx's transform cache and the OS file cache are filled for both paths.
for (const call of calls) {
  compiledWallMs([bin, ...call], modes.compiled);
  wallMs([bin, ...call], modes.source);
}
for (let run = 0; run < runs; run += 1) {
  record('floor', wallMs(['-e', '0'], process.env));
  for (const call of calls) {
    record(`compiled ${call.join(' ')}`, compiledWallMs([bin, ...call], modes.compiled));
    record(`source ${call.join(' ')}`, wallMs([bin, ...call], modes.source));
  }
}

const checkMs: number[] = [];
for (let run = 0; run < runs; run += 1) {
  if (!('entry' in compiledCli(dist))) buildCli();
  // A current build: the check stats every source, as bin/edgerl.js does before running it.
  const started = process.hrtime.bigint();
  const verdict = compiledCli(dist);
  if ('entry' in verdict) checkMs.push(Number(process.hrtime.bigint() - started) / 1e6);
}

const floor = median(samples.get('floor')!);
const cell = (ms: number) => `${ms.toFixed(0)} ms`.padStart(9);
console.log(
  `${'command'.padEnd(24)}${'compiled'.padStart(9)}${'tsx'.padStart(9)}  tsx/compiled${'floor'.padStart(9)}  compiled over the floor`,
);
for (const call of calls) {
  const compiled = median(samples.get(`compiled ${call.join(' ')}`)!);
  const source = median(samples.get(`source ${call.join(' ')}`)!);
  console.log(
    `${`edgerl ${call.join(' ')}`.padEnd(24)}${cell(compiled)}${cell(source)}  ${`${(source / compiled).toFixed(2)}×`.padStart(12)}${cell(floor)}  ${cell(compiled - floor)}`,
  );
}
console.log(
  `\nfloor (node -e 0): ${floor.toFixed(0)} ms; bin's staleness check: ${median(checkMs).toFixed(1)} ms`,
);
