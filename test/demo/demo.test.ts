// End to end: `edgerl demo --quick --json --replicas 2 --keep-versions 1` as a real process in a
// temporary working directory. Checks that the loop completes over a fleet of two inference replicas
// and that every kind of data it should leave is in the store; not the learning result (that is
// `npm run bench:learn`). A judge double (RULER's external LLM, the one stand-in the project allows)
// ranks each RL group, so the one round has reward spread and publishes demo@2 although the tiny start
// never succeeds (at --rollout-temperature 2 a group's two episodes differ; at 0.7 both were the same
// 32 newlines, which RULER scores alike). With --keep-versions 1 that publication unloads demo@1 from
// both replicas, and the A/B's start arm answers only if the demo loads it again (cli/demo/evaluate.ts).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerWith, type JudgeServer, startJudgeServer } from '../doubles/judge-server.ts';
import { runEdgerl } from '../support/run-edgerl.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import type { DemoSummary } from '../../cli/demo/summary.ts';

let cwd: string;
let judge: JudgeServer;
let code: number | null;
let stdout = '';
let stderr = '';

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'edgerl-demo-'));
  judge = await startJudgeServer();
  // --quick: 1 round of 2 groups, one judge call each (one ordering); the first block ranked above the second.
  judge.enqueue(...Array.from({ length: 2 }, () => answerWith((block) => (block.position === 0 ? 1 : 0))));
  ({ code, stdout, stderr } = await runEdgerl(
    ['demo', '--quick', '--json', '--replicas', '2', '--keep-versions', '1', '--rollout-temperature', '2'],
    {
      cwd,
      env: {
        ...process.env,
        JUDGE_BASE_URL: '',
        EDGERL_JUDGE_BASE_URL: judge.baseUrl,
        EDGERL_JUDGE_MODEL: 'judge-double',
      },
    },
  ));
}, 300_000);

afterAll(async () => {
  await judge?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function query(sql: string): Promise<unknown[][]> {
  const store = await openStore({ dataDir: join(cwd, '.edgerl/demo/pgdata'), migrations: 'skip' });
  try {
    return (await store.sql.query(sql)).rows.map((row) => [...row]);
  } finally {
    await store.close();
  }
}

describe('edgerl demo --quick --json --replicas 2 --keep-versions 1 (RL ranked by a judge double)', () => {
  it('exits 0 and prints the summary as JSON', () => {
    expect(code, stderr.slice(-2000)).toBe(0);
    const summary = JSON.parse(stdout) as DemoSummary;
    expect(summary.policy).toBe('demo');
    expect(summary.startVersion).toBe('demo@1');
    // --quick: one warm-start step, then the copy probe on its 4 held-out demonstrations.
    expect(summary.warmStart.steps).toBe(1);
    expect(summary.warmStart.copy?.startKey.total).toBe(4);
    expect(summary.warmStart.copy?.value.total).toBe(4);
    // --quick: 3 eval tasks per arm, each run once in each arm; the report is the experiments one,
    // start the control, metric success, a verdict once each arm has its 3 rewards.
    expect(summary.ab.experiment).toMatchObject({ metric: 'success', minSamples: 3 });
    expect(summary.ab.arms.map((arm) => [arm.name, arm.control])).toEqual([
      ['start', true],
      ['final', false],
    ]);
    // No episode errors (an error is the demo's infrastructure failing, e.g. an arm no replica
    // serves), and every multi-hop episode has a verifier reward of 0 or 1.
    for (const arm of summary.ab.arms)
      expect([arm.name, arm.ended, arm.errors, arm.rewarded]).toEqual([arm.name, 3, 0, 3]);
    // 3 rewards of 0 or 1 in each arm: the two-proportion test always applies (experiments/metric-tests.ts).
    expect(summary.ab.binaryRewards).toBe(true);
    expect(summary.ab.comparisons).toHaveLength(1);
    const comparison = summary.ab.comparisons[0];
    expect(comparison).toMatchObject({
      kind: 'tested',
      arm: 'final',
      control: 'start',
      test: 'two-proportion-z',
    });
    if (comparison?.kind === 'tested') {
      expect(comparison.pValue).toBeGreaterThanOrEqual(0);
      expect(comparison.pValue).toBeLessThanOrEqual(1);
    }
    // The judge's ranking gave the round spread, so RL published demo@2, the version that ships.
    expect(summary.rounds).toHaveLength(1);
    expect(summary.rounds[0]?.publishedVersion).toBe(2);
    expect(summary.finalVersion).toBe('demo@2');
    expect(summary.validation.map((row) => row.episodes)).toEqual(summary.validation.map(() => 2));
    expect(['best-validation', 'last']).toContain(summary.shipRule);
    expect(summary.queries).toHaveLength(3);
    for (const phase of ['services', 'warmStart', 'rl', 'evaluate', 'report', 'total'])
      expect(summary.seconds[phase as keyof DemoSummary['seconds']]).toBeGreaterThanOrEqual(0);
  });

  it('unloads demo@1 while RL publishes (--keep-versions 1), and loads it again for the A/B', () => {
    expect(code, stderr.slice(-2000)).toBe(0);
    // RULER ranked both RL groups, and nothing else asked the judge.
    expect(stderr).toContain('rewards: verifier + RULER');
    judge.verify();
    expect(judge.requests).toHaveLength(2);
    const rl = stderr.slice(stderr.indexOf('\n== 3/5'), stderr.indexOf('\n== 4/5'));
    const evaluation = stderr.slice(stderr.indexOf('\n== 4/5'), stderr.indexOf('\n== 5/5'));
    // Retention after demo@2's publication, on each replica; then the catch-up once the experiment exists.
    expect(rl.match(/^retention: \S+: unloaded demo@1$/gm)).toHaveLength(2);
    expect(evaluation.match(/^catch-up: \S+: loaded demo@1$/gm)).toHaveLength(2);
    expect(evaluation.indexOf('catch-up:')).toBeLessThan(evaluation.indexOf('experiment demo-eval-'));
  });

  it('leaves groups, trajectories with token-exact turns, steps, versions and the experiment in the store', async () => {
    // 1 round × 2 groups of 2 for training, 2 validation tasks per published version as groups of 1,
    // then 3 eval tasks × 2 arms as groups of 1.
    const perSplit = await query(
      `select t.split, count(distinct g.id), count(r.id) from rollout_groups g join tasks t on t.id = g.task_id
         join trajectories r on r.group_id = g.id group by t.split order by t.split`,
    );
    const [[published]] = (await query(
      `select count(*) from policy_versions where status = 'published' and version >= 1`,
    )) as [[number]];
    expect(perSplit.map(([split, groups, episodes]) => [split, Number(groups), Number(episodes)])).toEqual([
      ['eval', 6, 6],
      ['train', 2, 4],
      ['validation', 2 * Number(published), 2 * Number(published)],
    ]);
    // Held-out groups are never trained on: no validation or eval group is marked trained.
    const [[trainedHeldOut]] = (await query(
      `select count(*) from rollout_groups g join tasks t on t.id = g.task_id where t.split <> 'train' and g.status = 'trained'`,
    )) as [[number]];
    expect(Number(trainedHeldOut)).toBe(0);
    const [[withIds]] = (await query(
      `select count(*) from turns where role = 'assistant' and cardinality(completion_token_ids) > 0`,
    )) as [[number]];
    expect(Number(withIds)).toBeGreaterThan(0);
    // One SFT step (8 demonstrations, batch 8) and whatever the GRPO cycle recorded.
    const [[sftSteps]] = (await query(
      `select count(*) from training_steps s join training_runs r on r.id = s.training_run_id where r.config->>'mode' = 'sft'`,
    )) as [[number]];
    expect(Number(sftSteps)).toBe(1);
    const versions = await query(
      `select v.version from policy_versions v where v.status = 'published' and v.version >= 1 order by 1`,
    );
    expect(versions[0]?.[0]).toBe(1);
    const arms = await query(
      `select a.name, count(t.id) from experiment_arms a left join trajectories t on t.experiment_arm_id = a.id group by a.name order by a.name`,
    );
    expect(arms.map(([name, n]) => [name, Number(n)])).toEqual([
      ['final', 3],
      ['start', 3],
    ]);
    // Fleet publication: every published version (demo@1 too, loaded again) is ready on both
    // replicas, and episodes were answered by both (the edge rotates over the replicas that hold a version).
    const readiness = await query(
      `select v.adapter_name, count(*) filter (where p.state = 'ready') from policy_versions v
         join publications p on p.policy_version_id = v.id where v.status = 'published' group by 1 order by 1`,
    );
    expect(readiness.length).toBeGreaterThanOrEqual(1);
    for (const [, ready] of readiness) expect(Number(ready)).toBe(2);
    const [[answering]] = (await query(
      `select count(distinct metadata->>'replica') from turns where role = 'assistant'`,
    )) as [[number]];
    expect(Number(answering)).toBe(2);
  });

  it('writes the console as a static export whose charts hold every stored step, and the summary file', async () => {
    const dir = join(cwd, '.edgerl/demo/console');
    const index = readFileSync(join(dir, 'index.html'), 'utf8');
    expect(index).toContain('Training runs');
    const pages = readdirSync(dir).filter((name) => name.endsWith('.html'));
    for (const name of pages) {
      const page = readFileSync(join(dir, name), 'utf8');
      // Offline: every script, style and link is a file of the export.
      // (`data:,` is the empty favicon that keeps the browser from asking for /favicon.ico.)
      for (const [, target] of page.matchAll(/(?:src|href)="(?!data:)([^"]*)"/g)) {
        expect(target, name).not.toMatch(/^(?:[a-z]+:)?\/\//);
        expect(existsSync(join(dir, (target as string).replace(/&amp;/g, '&'))), `${name} → ${target}`).toBe(
          true,
        );
      }
    }
    // Each run's loss chart (SFT and GRPO steps both record a loss): one point per step the store
    // holds for it, ascending (the old report's axis started at 0 whatever the steps were).
    const runs = (await query(
      `select training_run_id::text, array_agg(step order by step)::text from training_steps where metrics ? 'loss' group by 1`,
    )) as [string, string][];
    expect(runs.length).toBeGreaterThan(0);
    for (const [runId, steps] of runs) {
      const page = readFileSync(join(dir, `run-${runId}.html`), 'utf8');
      const block =
        /<script type="application\/json" id="chart-loss">([^<]*)<\/script>/.exec(page)?.[1] ?? '{}';
      const chart = JSON.parse(block) as { x: number[]; points: number };
      expect(chart.x).toEqual(JSON.parse(steps.replace('{', '[').replace('}', ']')));
      expect(chart.points).toBe(chart.x.length);
    }
    expect(existsSync(join(cwd, '.edgerl/demo/summary.json'))).toBe(true);
    expect(stderr).toMatch(/console, live while the demo runs: http:\/\/127\.0\.0\.1:\d+\/console/);
  });
});
