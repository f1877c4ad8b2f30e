// `edgerl score --group ID` end to end: a group written to an embedded store on disk, the command run
// through the CLI dispatcher against the stand-in judge HTTP server (a test double), and its output,
// exit status and the store checked.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { answerWith, type JudgeServer, startJudgeServer } from '../doubles/judge-server.ts';
import { lookupTools } from './lookup-group.ts';
import { type StoredLookupGroup, storeLookupGroup } from './store-lookup-group.ts';

let dataDir: string;
let server: JudgeServer;
let ok: StoredLookupGroup;
let failing: StoredLookupGroup;
let running: StoredLookupGroup;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'edgerl-score-'));
  const store = await openStore({ dataDir });
  try {
    // Stored with the fixture's tools (search_wiki, read_page), not the multi-hop environment's (lookup).
    ok = await storeLookupGroup(store, 'cli-ok', 3, { tools: lookupTools });
    failing = await storeLookupGroup(store, 'cli-fail', 2);
    running = await storeLookupGroup(store, 'cli-running', 2, { finish: false });
  } finally {
    await store.close();
  }
  server = await startJudgeServer();
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function score(args: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(['score', ...args], {
    env: {
      EDGERL_DATA_DIR: dataDir,
      EDGERL_JUDGE_BASE_URL: server.baseUrl,
      EDGERL_JUDGE_MODEL: 'judge-test',
      ...env,
    },
    stdout: sink((text) => {
      out += text;
    }),
    stderr: sink((text) => {
      err += text;
    }),
  });
  return { code, out, err };
}

describe('edgerl score', () => {
  it('scores a complete group, prints each score and explanation, and shows the judge the stored tools', async () => {
    const rubricFile = join(dataDir, 'rubric.txt');
    writeFileSync(rubricFile, 'Only the final answer counts.');
    // The judge double gives 0.8 to the first fixture trajectory (its answer cites three sources), 0.2 to the others.
    server.enqueue(
      answerWith((block) =>
        JSON.stringify(block.messages.at(-1)).includes('Sources: The Remains') ? 0.8 : 0.2,
      ),
    );
    const { code, out, err } = await score(['--group', ok.groupId, '--rubric-file', rubricFile]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain(`group ${ok.groupId}: scored by judge-test`);
    // Default weights (judge 1, verifier 0): reward = score; the verifier reward is shown beside it.
    const [first, ...others] = ok.ids;
    expect(out).toMatch(
      new RegExp(`  ${first}  score 0\\.800 verifier 1\\.000 → reward 0\\.800\\n    block \\d of 3\\n`),
    );
    for (const id of others) {
      expect(out).toMatch(
        new RegExp(`  ${id}  score 0\\.200 verifier 0\\.000 → reward 0\\.200\\n    block \\d of 3\\n`),
      );
    }
    const request = server.requests.at(-1);
    // The tools stored with the trajectories, not the multi-hop environment's current list.
    expect(request?.tools?.map((tool) => (tool as { function: { name: string } }).function.name)).toEqual([
      'search_wiki',
      'read_page',
    ]);
    expect(request?.messages[0]?.content).toContain('Grading standards:\nOnly the final answer counts.');
    server.verify();
  });

  it('prints the outcome as JSON with --json, read from the former JUDGE_* names with one line saying so', async () => {
    server.enqueue(answerWith(() => 0.5));
    const { code, out, err } = await score(['--group', ok.groupId, '--json'], {
      EDGERL_JUDGE_BASE_URL: '',
      EDGERL_JUDGE_MODEL: '',
      JUDGE_BASE_URL: server.baseUrl,
      JUDGE_MODEL: 'judge-test',
    });
    expect(err).toBe(
      'edgerl score: deprecated names, still read for now: JUDGE_BASE_URL → EDGERL_JUDGE_BASE_URL, JUDGE_MODEL → EDGERL_JUDGE_MODEL\n',
    );
    expect(code).toBe(0);
    const outcome = JSON.parse(out);
    expect(outcome).toMatchObject({ groupId: ok.groupId, status: 'scored' });
    expect(outcome.records.map((record: { trajectoryId: string }) => record.trajectoryId).sort()).toEqual(
      [...ok.ids].sort(),
    );
    for (const record of outcome.records) expect(record).toMatchObject({ judgeScore: 0.5, reward: 0.5 });
    server.verify();
  });

  it('exits 1 and marks the group unscored when the judge keeps failing', async () => {
    server.enqueue({ kind: 'status', status: 401, body: { error: { message: 'bad key' } } });
    const { code, out, err } = await score(['--group', failing.groupId]);
    expect(code).toBe(1);
    // Its rows were stored without a tool list: said so, and judged without tools.
    expect(err).toContain('note: 2 trajectory(ies) have no stored tool list');
    expect(server.requests.at(-1)?.tools).toBeUndefined();
    expect(out).toContain(
      `group ${failing.groupId}: unscored — judge failed after 1 attempt(s): http: HTTP 401: bad key`,
    );
    const store = await openStore({ dataDir });
    try {
      expect((await store.getGroup({ groupId: failing.groupId })).group.status).toBe('unscored');
    } finally {
      await store.close();
    }
    server.verify();
  });

  it('refuses a group that is still running without calling the judge', async () => {
    const { code, err } = await score(['--group', running.groupId]);
    expect(code).toBe(1);
    expect(err).toContain(`group ${running.groupId} is running; only complete groups can be scored`);
    expect(server.problems).toEqual([]);
  });

  it('names what is missing: the group flag, the judge variables', async () => {
    expect((await score([])).err).toContain('--group ID is required');
    const unconfigured = await main(['score', '--group', ok.groupId], {
      env: {},
      stdout: new Writable({ write: (_c, _e, done) => done() }),
      stderr: new Writable({
        write(chunk, _e, done) {
          expect(String(chunk)).toContain('set EDGERL_JUDGE_BASE_URL, EDGERL_JUDGE_MODEL');
          done();
        },
      }),
    });
    expect(unconfigured).toBe(1);
  });
});
