// `npm run bench:rollout-noise -- --data-dir DIR [--seed N] [--rounds 16] [--groups 8] [--group-size 8]
// [--rollout-temperature T]`: the baseline for the issue's stability measure on rollout success (no
// round after the fourth more than 15 points below the best so far). It rolls out the same rounds as
// `edgerl demo` (fresh training tasks each round, the RL rounds' sampling) from a finished demo's data
// directory, but trains nothing: every round samples one frozen policy version (the policy's default,
// the newest published). What this prints as the largest fall is then task-sampling and sampling noise
// alone, to read next to bench:learn's figure for the learning run. DIR: a demo's --data-dir, or the
// `data:` directory bench:learn prints; its episodes are stored there like any others (on tasks no demo
// phase samples).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../db/drivers/open-store.ts';
import { resolveDemoConfig } from '../cli/demo/demo-config.ts';
import { demoPaths } from '../cli/demo/demo-paths.ts';
import { rollOut, rolloutSuccessOf, rolloutTemperatureOf } from '../cli/demo/rl-rounds.ts';
import { largestFallBelowBest } from '../cli/demo/stability.ts';
import { startServices } from '../cli/demo/start-services.ts';
import { flagValue } from './backend-flag.ts';

/** Task seeds of these rounds start here: apart from every seed the demo's phases use. */
const noiseSeedBase = 7_000_000;
/** The burn-in: falls count from the fifth round on. */
const burnIn = 4;

const dataDir = flagValue('data-dir');
if (dataDir === undefined || !existsSync(join(dataDir, 'pgdata'))) {
  process.stderr.write('usage: bench:rollout-noise -- --data-dir DIR (a finished demo data directory)\n');
  process.exit(2);
}
const number = (name: string) => {
  const value = flagValue(name);
  return value === undefined ? undefined : Number(value);
};
const rolloutTemperature = number('rollout-temperature');
const config = resolveDemoConfig({
  dataDir,
  seed: number('seed') ?? 1,
  rounds: number('rounds') ?? 16,
  ...(number('groups') === undefined ? {} : { groupsPerRound: number('groups') }),
  ...(number('group-size') === undefined ? {} : { groupSize: number('group-size') }),
  ...(rolloutTemperature === undefined ? {} : { rolloutTemperature }),
});
const paths = demoPaths(dataDir);
const store = await openStore({ dataDir: paths.store, migrations: 'skip' });
const log = (line: string) => process.stderr.write(`${line}\n`);
const services = await startServices(config, paths, store, log);
const successes: number[] = [];
let served = '';
try {
  for (let round = 1; round <= config.rounds; round++) {
    const starts = Array.from({ length: config.groupsPerRound }, (_, g) => ({
      taskSeed: noiseSeedBase + config.seed * 100_003 + round * config.groupsPerRound + g,
    }));
    const { views, model } = await rollOut(config, services.client, starts, () => {});
    served = model;
    successes.push(rolloutSuccessOf(views).success);
    log(`round ${round}/${config.rounds}: ${(100 * (successes.at(-1) ?? 0)).toFixed(1)}% on ${model}`);
  }
} finally {
  await services.close();
  await store.close();
}
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
process.stdout.write(
  [
    `\nbench:rollout-noise: ${served} frozen, ${config.rounds} rounds × ${config.groupsPerRound} groups × ${config.groupSize} at T ${rolloutTemperatureOf(config)}`,
    `  rollout success per round: ${successes.map(pct).join(' ')}`,
    `  mean ${pct(successes.reduce((a, b) => a + b, 0) / successes.length)}, range ${pct(Math.min(...successes))}–${pct(Math.max(...successes))}`,
    `  largest fall below the best so far after round ${burnIn}: ${(100 * largestFallBelowBest(successes, burnIn)).toFixed(1)} points (the issue's bound: 15), with no training at all`,
  ].join('\n') + '\n',
);
