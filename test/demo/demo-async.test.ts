// End to end: `edgerl demo --quick --json --async --rounds 2` as a real process. Checks that the
// overlapped phase 3 ends on its own once every task has rolled out and every complete RL group has
// been consumed by the continuous trainer (none left for a later run), with one cycle per round's
// worth of groups; not the learning result (`npm run bench:learn -- --async`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEdgerl } from '../support/run-edgerl.ts';
import type { DemoSummary } from '../../cli/demo/summary.ts';
import { openStore } from '../../db/drivers/open-store.ts';

let cwd: string;
let code: number | null;
let stdout = '';
let stderr = '';

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'edgerl-demo-async-'));
  ({ code, stdout, stderr } = await runEdgerl(['demo', '--quick', '--json', '--async', '--rounds', '2'], {
    cwd,
    env: { ...process.env, JUDGE_BASE_URL: '', EDGERL_JUDGE_BASE_URL: '' },
  }));
}, 300_000);

afterAll(() => {
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

describe('edgerl demo --quick --json --async', () => {
  it('rolls out every task and leaves no RL group unconsumed', async () => {
    expect(code, stderr.slice(-2000)).toBe(0);
    const summary = JSON.parse(stdout) as DemoSummary;
    expect(summary.config.async).toBe(true);
    // --quick: 2 groups a round; the trainer takes a cycle per 2 complete groups (or the rest at the end).
    expect(summary.rounds.reduce((sum, round) => sum + round.episodes, 0)).toBe(2 * 2 * 2);
    const store = await openStore({ dataDir: join(cwd, '.edgerl/demo/pgdata'), migrations: 'skip' });
    try {
      // RL groups: on train tasks (validation groups are never trained; eval's are the experiment's).
      const { rows } = await store.sql.query(
        "select g.status, count(*)::int from rollout_groups g join tasks t on t.id = g.task_id where g.experiment_id is null and t.split = 'train' group by g.status order by g.status",
      );
      expect(rows.map((row) => [...row])).toEqual([['trained', 4]]);
    } finally {
      await store.close();
    }
  });
});
