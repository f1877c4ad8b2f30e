// `npm run bench:learn -- --async`: the demo twice in one run, with the same settings and seed (so
// the same warm start and the same RL tasks): first its synchronous rounds (roll out a round, then
// train on it), then `--async` (rollouts and training overlapped: edgerl train --continuous). Prints
// each run's wall time (RL phase and total) and held-out gain (final − start success on the A/B
// evaluation, with its interval and p-value), and the async run's staleness and importance-weight
// statistics read from its store's training_steps. Asserts nothing. The load average is printed
// around each run: on a shared machine the two runs do not get the same cores.
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../cli/main.ts';
import { demoPaths } from '../cli/demo/demo-paths.ts';
import type { DemoSummary } from '../cli/demo/summary.ts';
import { openStore } from '../db/drivers/open-store.ts';

interface Run {
  readonly label: string;
  readonly summary: DemoSummary;
  readonly load: readonly [number, number];
}

async function runDemo(label: string, extra: readonly string[]): Promise<Run | number> {
  const dataDir = join(mkdtempSync(join(tmpdir(), `edgerl-learn-${label}-`)), 'demo');
  let json = '';
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      json += String(chunk);
      done();
    },
  });
  const before = loadavg()[0] ?? 0;
  process.stderr.write(`\n#### bench:learn --async: the ${label} run (${dataDir})\n`);
  const code = await main(['demo', '--json', '--fresh', '--data-dir', dataDir, ...extra], { stdout });
  if (code !== 0) return code;
  return { label, summary: JSON.parse(json) as DemoSummary, load: [before, loadavg()[0] ?? 0] };
}

/** The async run's off-policy figures, over its GRPO steps. */
async function offPolicyFigures(summary: DemoSummary): Promise<string[]> {
  const store = await openStore({ dataDir: demoPaths(summary.dataDir).store });
  try {
    const { rows } = await store.sql.query(
      `select count(*)::int,
              avg((metrics->>'staleness/mean')::float8), max((metrics->>'staleness/max')::float8),
              sum((metrics->>'groups/stale')::float8),
              avg((metrics->>'is/weight_mean')::float8), max((metrics->>'is/weight_max')::float8),
              avg((metrics->>'is/truncated_fraction')::float8), max((metrics->>'is/ratio_max')::float8)
         from training_steps where metrics ? 'staleness/max'`,
    );
    const [steps, staleMean, staleMax, skipped, weightMean, weightMax, truncated, ratioMax] = (rows[0] ??
      []) as (number | null)[];
    const f = (value: number | null | undefined, digits: number) =>
      value === null || value === undefined ? '–' : Number(value).toFixed(digits);
    const { rows: skippedGroups } = await store.sql.query(
      "select count(*)::int from rollout_groups where status_reason like 'stale:%'",
    );
    return [
      `  async off-policy data over ${steps} GRPO step(s): staleness mean ${f(staleMean, 2)}, max ${f(staleMax, 0)} version(s) behind; ${f(skipped, 0)} group(s) skipped as stale (${skippedGroups[0]?.[0]} marked in rollout_groups)`,
      `  async importance weights: mean ${f(weightMean, 4)}, max ${f(weightMax, 3)} (cap 2), ${(100 * Number(truncated ?? 0)).toFixed(4)}% of tokens at the cap (mean over steps), largest untruncated ratio ${f(ratioMax, 2)}`,
    ];
  } finally {
    await store.close();
  }
}

function describe(run: Run): string {
  const { summary } = run;
  const comparison = summary.ab.comparisons[0];
  const gain =
    comparison?.kind === 'tested' && comparison.test === 'two-proportion-z'
      ? `gain ${(100 * comparison.difference).toFixed(1).padStart(5)} points (95% CI ${(100 * comparison.ci[0]).toFixed(1)} to ${(100 * comparison.ci[1]).toFixed(1)}, p = ${comparison.pValue.toExponential(2)})`
      : `no success-rate comparison (${comparison?.kind === 'untested' ? comparison.reason : 'rewards are not all 0 or 1'})`;
  const arms = summary.ab.arms
    .map((arm) => `${arm.name} ${arm.success ? `${(100 * arm.success.rate).toFixed(1)}%` : '–'}`)
    .join(', ');
  return `  ${run.label.padEnd(5)} RL ${summary.seconds.rl.toFixed(1).padStart(6)} s, total ${summary.seconds.total.toFixed(1).padStart(6)} s; ${gain}; ${arms}; load ${run.load[0].toFixed(2)} → ${run.load[1].toFixed(2)}`;
}

export async function compareAsync(demoArgs: readonly string[]): Promise<number> {
  const sync = await runDemo('sync', demoArgs);
  if (typeof sync === 'number') return sync;
  const overlapped = await runDemo('async', [...demoArgs, '--async']);
  if (typeof overlapped === 'number') return overlapped;
  const c = sync.summary.config;
  const lines = [
    `\nbench:learn --async: ${c.rounds} rounds × ${c.groupsPerRound} groups × ${c.groupSize} episodes each way, ${c.preset}, seed ${c.seed}`,
    describe(sync),
    describe(overlapped),
    `  RL wall time async / sync: ${(overlapped.summary.seconds.rl / sync.summary.seconds.rl).toFixed(2)}×; total ${(overlapped.summary.seconds.total / sync.summary.seconds.total).toFixed(2)}×`,
    ...(await offPolicyFigures(overlapped.summary)),
    `  data: ${sync.summary.dataDir} and ${overlapped.summary.dataDir}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
