// The embedded SQL sandbox started ahead of the first query: a fresh edge builds nothing while it runs
// no episode that requires `sql` (an edge serving other environments never pays its memory), and the
// first sql-agent episode starts it before its first turn, so its first query runs at once instead of
// paying the build inside its 5 s tool timeout; the built dump is kept on disk, reused by the next start,
// and rebuilt when the seed changes or the file is damaged. Prints the cold build and the cached start,
// measured in the same run.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlTasks } from '../../edge/environments/sql-agent/sql-tasks.ts';
import { environments } from '../../edge/environments/environments.ts';
import type { PolicyRequest } from '../../edge/policy/policy-client.ts';
import { ScriptedPolicyClient, textReply, toolCallReply } from '../../edge/policy/scripted-policy-client.ts';
import { startEdge } from '../../edge/runtime/node.ts';
import { sampleSeedSql } from '../../sandbox/sample-seed.ts';
import { type EmbeddedReadOnlySql, embeddedReadOnlySql } from '../../sandbox/node/embedded-read-only-sql.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

const apiKey = 'warm-sandbox-key';
let root: string;
let testStore: TestStore;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'edgerl-warm-sandbox-'));
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
  await rm(root, { recursive: true, force: true });
});

/** The task an episode's first request asks, by its prompt. */
function taskOf(request: PolicyRequest) {
  const asked = request.messages
    .map((message) => (typeof message.content === 'string' ? message.content : ''))
    .join('\n');
  const task = sqlTasks.find((candidate) => asked.includes(candidate.prompt));
  if (!task) throw new Error('no sql task in the request');
  return task;
}

async function timedWarm(sql: EmbeddedReadOnlySql): Promise<number> {
  const started = performance.now();
  await sql.warm();
  return performance.now() - started;
}

describe('the embedded SQL sandbox, warmed', () => {
  it('is built by the first sql-agent episode before its first turn, not before, and answers its first query', async () => {
    const cacheDir = join(root, 'edge-cache');
    let sandbox: EmbeddedReadOnlySql | undefined;
    // Worker starts when the episode's first policy request came: the sandbox must be up by then.
    let startsAtFirstRequest: number | undefined;
    // A perfect agent: runs the reference query with the tool, then answers with it.
    const policy = new ScriptedPolicyClient([
      (request) => {
        startsAtFirstRequest = sandbox?.stats.starts;
        return toolCallReply([
          { id: 'call_1', name: 'query', arguments: { sql: taskOf(request).referenceSql } },
        ]);
      },
      (request) => textReply(`\`\`\`sql\n${taskOf(request).referenceSql}\n\`\`\``),
    ]);
    const logs: string[] = [];
    const edge = await startEdge({
      config: {
        upstream: { baseUrl: 'http://127.0.0.1:9/v1', requestTokenIds: true, timeoutMs: 1000 },
        apiKeys: [apiKey],
        defaultModel: 'tiny-base',
        episodeConcurrency: 1,
        policyTimeoutMs: 10_000,
      },
      port: 0,
      store: testStore.store,
      environments,
      policy,
      resumeUnfinished: false,
      sandboxCacheDir: cacheDir,
      log: (line) => logs.push(line),
    });
    try {
      sandbox = edge.sql as EmbeddedReadOnlySql;
      // Listening, and nothing built: no episode has asked for it.
      expect(sandbox.stats.starts).toBe(0);
      expect(logs.some((line) => line.startsWith('SQL sandbox'))).toBe(false);
      const started = await fetch(`${edge.url}/v1/rollouts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ env: 'sql-agent', groupSize: 1, taskSeed: 3 }),
      });
      expect(started.status).toBe(202);
      const { groupId } = (await started.json()) as { groupId: string };
      await edge.queue.idle();
      expect(startsAtFirstRequest).toBe(1);
      expect(logs.filter((line) => line.startsWith('SQL sandbox ready in '))).toHaveLength(1);
      const { trajectories } = await testStore.store.getGroup({ groupId, includeTurns: true });
      const [trajectory] = trajectories;
      expect(trajectory?.status).toBe('finished');
      const tool = trajectory?.turns?.find((turn) => turn.role === 'tool');
      expect(String(tool?.content)).not.toMatch(/did not finish|error/i);
      expect(trajectory?.verifierReward).toBe(1);
      policy.assertDone();
    } finally {
      await edge.close();
    }
  });

  it('keeps the built dump on disk, starts from it next time, and rebuilds for a damaged file or another seed', async () => {
    const cacheDir = join(root, 'cache');
    const cold = embeddedReadOnlySql({ cacheDir });
    const coldMs = await timedWarm(cold);
    expect(cold.stats.cached).toBe(false);
    await cold.close();
    const [file] = await readdir(cacheDir);
    expect(file).toMatch(/^embedded-sandbox-[0-9a-f]{32}\.tar$/);

    const warm = embeddedReadOnlySql({ cacheDir });
    const cachedMs = await timedWarm(warm);
    expect(warm.stats.cached).toBe(true);
    const count = await warm.query('select count(*)::int from customers', { timeoutMs: 1000, maxRows: 10 });
    expect(count.rows).toEqual([[24]]);
    await warm.close();
    // Figures, not assertions: shared machines vary (conventions.md §18).
    console.log(
      `embedded SQL sandbox: cold build + first worker ${Math.round(coldMs)} ms, from the cached dump ${Math.round(cachedMs)} ms (${(coldMs / cachedMs).toFixed(1)}x)`,
    );

    // A damaged file is dropped and rebuilt.
    await writeFile(join(cacheDir, file as string), 'not a tar file');
    const damaged = embeddedReadOnlySql({ cacheDir });
    await damaged.warm();
    expect(damaged.stats.cached).toBe(false);
    expect(
      (await damaged.query('select count(*)::int from customers', { timeoutMs: 1000, maxRows: 10 })).rows,
    ).toEqual([[24]]);
    await damaged.close();
    expect(await readdir(cacheDir)).toEqual([file]);

    // Another seed is another key: built, and the old seed's dump removed.
    const changed = embeddedReadOnlySql({
      cacheDir,
      seedSql: `${sampleSeedSql}\nCREATE TABLE "sample"."extra" ("id" integer PRIMARY KEY);\nINSERT INTO "sample"."extra" VALUES (1), (2);`,
    });
    await changed.warm();
    expect(changed.stats.cached).toBe(false);
    expect(
      (await changed.query('select count(*)::int from extra', { timeoutMs: 1000, maxRows: 10 })).rows,
    ).toEqual([[2]]);
    await changed.close();
    const [only, ...more] = await readdir(cacheDir);
    expect(more).toEqual([]);
    expect(only).not.toBe(file);
  });
});
