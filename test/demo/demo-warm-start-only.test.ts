// `edgerl demo --warm-start-only` stops once the warm start is published, and a run on a copy of that
// data directory continues with RL from it, as `bench:learn -- --warm-start-from DIR` does to compare
// RL settings from one start. Real processes, the --quick sizes.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgerlRun, runEdgerl } from '../support/run-edgerl.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import type { DemoSummary } from '../../cli/demo/summary.ts';

let root: string;

const demo = (args: readonly string[]) =>
  runEdgerl(['demo', '--quick', ...args], {
    cwd: root,
    env: { ...process.env, JUDGE_BASE_URL: '', EDGERL_JUDGE_BASE_URL: '' },
  });

async function count(dataDir: string, sql: string): Promise<number> {
  const store = await openStore({ dataDir: join(dataDir, 'pgdata'), migrations: 'skip' });
  try {
    return Number((await store.sql.query(sql)).rows[0]?.[0]);
  } finally {
    await store.close();
  }
}

let first: EdgerlRun;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'edgerl-demo-ws-'));
  first = await demo(['--warm-start-only', '--data-dir', join(root, 'start')]);
}, 300_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('edgerl demo --warm-start-only', () => {
  it('exits 0 after publishing the warm start, with no RL group in the store', async () => {
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    expect(first.stderr).toContain('--warm-start-only');
    expect(first.stderr).not.toContain('3/5 RL');
    const dir = join(root, 'start');
    // demo@0 is the base; the warm start's demo@1 is the one version after it.
    expect(await count(dir, 'select count(*) from policy_versions where version >= 1')).toBe(1);
    expect(await count(dir, 'select count(*) from rollout_groups')).toBe(0);
  });

  it('a run on a copy of its data directory reuses that start and finishes the loop', async () => {
    const copy = join(root, 'variant');
    cpSync(join(root, 'start'), copy, { recursive: true });
    const run = await demo(['--json', '--data-dir', copy]);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const summary = JSON.parse(run.stdout) as DemoSummary;
    expect(summary.reused.warmStart).toBe(true);
    expect(summary.startVersion).toBe('demo@1');
    expect(summary.rounds).toHaveLength(1);
    expect(summary.ab.arms.map((arm) => arm.adapterName)[0]).toBe('demo@1');
  }, 300_000);
});
