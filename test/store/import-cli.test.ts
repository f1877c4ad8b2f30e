// `edgerl import FILE.jsonl` through the CLI dispatcher: OpenAI chat lines stored as finished
// trajectories with exact token ids and logprobs; refused lines named by number while the rest import
// (also when the store refuses a whole batch); a second run of the same file stores nothing new.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { defaultLimits } from '../../edge/edge-limits.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { storeConfigFromEnv } from '../../db/drivers/store-config.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';

let dir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-cli-import-'));
  database = testServerUrl ? await createTestDatabase(testServerUrl) : undefined;
  env = database ? { DATABASE_URL: database.url } : { EDGERL_DATA_DIR: join(dir, 'pgdata') };
  // A server is migrated by its operator; the embedded store migrates itself.
  if (database) expect((await run(['db', 'migrate'])).code).toBe(0);
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += chunk));
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env });
  return { code, out, err };
}

async function query(text: string, params: unknown[] = []): Promise<readonly (readonly unknown[])[]> {
  const config = storeConfigFromEnv(env);
  const store = await openStore({ url: config.url, dataDir: config.dataDir });
  try {
    return (await store.sql.query(text, params)).rows;
  } finally {
    await store.close();
  }
}

const toolCall = { id: 'call-1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":2}' } };
const good = {
  messages: [
    { role: 'system', content: 'You add.' },
    { role: 'user', content: 'What is 2 + 2?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [toolCall],
      token_ids: [5, 6, 7],
      logprobs: [-0.1, -2.5e-9, -0.3],
    },
    { role: 'tool', content: '4', tool_call_id: 'call-1' },
    { role: 'assistant', content: 'It is 4.', logprobs: [-0.5] },
  ],
  tools: [{ type: 'function', function: { name: 'add', parameters: { type: 'object' } } }],
  metadata: { dataset: 'unit' },
  reward: 1,
};

describe('edgerl import', () => {
  it('imports the episodes, refuses bad lines by number, and is a no-op when run again', async () => {
    const lines = [
      JSON.stringify(good), // 1
      '', // 2: blank, skipped
      '{"messages": [', // 3: not JSON
      JSON.stringify({ ...good, key: 'k-1', reward: 0 }), // 4
      JSON.stringify({ messages: [{ role: 'user', content: 'hi', name: 'bob' }] }), // 5: unknown field
      JSON.stringify({ messages: [{ role: 'assistant', content: 'x', token_ids: [1, 2], logprobs: [-1] }] }), // 6
      JSON.stringify({ ...good, key: 'k-1', reward: 0.5 }), // 7: another episode under k-1
      JSON.stringify({ ...good, metadata: { dataset: 'unit', copy: 2 } }), // 8
      JSON.stringify(good), // 9: line 1 again
    ];
    const file = join(dir, 'chats.jsonl');
    await writeFile(file, `${lines.join('\n')}\n`);
    // Batches of 2: line 7's conflict refuses its batch (with line 8), which is retried line by line.
    const first = await run(['import', file, '--env', 'arith', '--batch', '2']);
    expect(first.err.trim().split('\n')).toEqual([
      'edgerl import: line 3: (line): not valid JSON',
      'edgerl import: line 5: messages.0.name: unknown field',
      expect.stringMatching(
        /^edgerl import: line 6: messages\.0\.logprobs: must have one logprob per completion token id/,
      ),
      expect.stringMatching(
        /^edgerl import: line 7: key: .*already stored under this key with a different verifierReward/,
      ),
    ]);
    expect(first.out).toContain('imported 3 episodes (15 turns)');
    expect(first.out).toContain('1 already stored; 4 lines refused');
    expect(first.code).toBe(1);

    const rows = await query(
      `select t.env, t.status, t.verifier_reward, t.turn_count, t.completion_token_count, t.metadata->>'dataset',
         u.completion_token_ids, u.completion_logprobs, u.metadata->>'tokenExact', u.metadata->>'recordedBy'
       from trajectories t join turns u on u.trajectory_id = t.id and u.index = 2
       where t.ingest_key = 'k-1'`,
    );
    expect(rows).toEqual([
      ['arith', 'finished', 0, 5, 3, 'unit', [5, 6, 7], [-0.1, -2.5e-9, -0.3], 'true', 'import'],
    ]);
    // The last assistant message had logprobs without ids: kept in metadata, not as completion tokens.
    const untokenized = await query(
      `select u.completion_logprobs, u.metadata->'untokenizedLogprobs', u.metadata->>'tokenExact'
       from trajectories t join turns u on u.trajectory_id = t.id and u.index = 4 where t.ingest_key = 'k-1'`,
    );
    expect(untokenized).toEqual([[null, [-0.5], 'false']]);
    expect(await query(`select count(*)::int from trajectories where env = 'arith'`)).toEqual([[3]]);

    const again = await run(['import', file, '--env', 'arith']);
    expect(again.out).toContain('imported 0 episodes (0 turns)');
    expect(again.out).toContain('4 already stored; 4 lines refused');
    expect(await query(`select count(*)::int from trajectories where env = 'arith'`)).toEqual([[3]]);
  });

  it('refuses lines no writer of turns may store, not UTF-8 or over the edge’s limit, by number', async () => {
    const withMessages = (key: string, messages: unknown[], extra: Record<string, unknown> = {}) =>
      JSON.stringify({ ...good, key, messages, ...extra });
    const [system, user, calling, answer, final] = good.messages;
    const assistantWith = (logprobs: number[]) => ({ ...calling, logprobs });
    const oversized = JSON.stringify({
      key: 'r-9',
      messages: [{ role: 'user', content: 'x'.repeat(defaultLimits.ingestBodyBytes) }],
    });
    const lines: (string | Buffer)[] = [
      withMessages('r-1', good.messages), // 1
      withMessages('r-2', good.messages, { reward: 1e308 }), // 2
      withMessages('r-3', [system, user, assistantWith([5, -1, -1]), answer, final]), // 3
      withMessages('r-4', [system, user, assistantWith([-1, -1e308, -1]), answer, final]), // 4
      withMessages('r-5', [system, user, calling, { ...answer, tool_call_id: 'call-9' }, final]), // 5
      withMessages('r-6', [user, answer]), // 6
      withMessages('r-7', [user, final, final]), // 7
      // 8: "café" in Latin-1 (0xE9 then a quote: no UTF-8 sequence)
      Buffer.concat([
        Buffer.from('{"key":"r-8","messages":[{"role":"user","content":"caf'),
        Buffer.from([0xe9]),
        Buffer.from('"}]}'),
      ]),
      oversized, // 9
      withMessages('r-10', good.messages), // 10: still read after the long line
    ];
    const file = join(dir, 'unsound.jsonl');
    const bytes = lines.map((line) => Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
    await writeFile(file, Buffer.concat(bytes));
    const line8Start = bytes.slice(0, 7).reduce((sum, line) => sum + line.byteLength, 0);
    const result = await run(['import', file, '--env', 'unsound']);
    expect(result.err.trim().split('\n')).toEqual([
      'edgerl import: line 2: reward: must be in [0, 1], got 1e+308',
      expect.stringMatching(/^edgerl import: line 3: messages\.2\.logprobs\.0: must be ≤ 0 /),
      expect.stringMatching(/^edgerl import: line 4: messages\.2\.logprobs\.1: must be ≥ -9999 /),
      'edgerl import: line 5: messages.3.tool_call_id: answers no call of the assistant turn before it (its calls: "call-1")',
      expect.stringMatching(
        /^edgerl import: line 6: messages\.1\.tool_call_id: a tool result with no call before it/,
      ),
      expect.stringMatching(
        /^edgerl import: line 7: messages\.2\.role: an assistant turn right after another/,
      ),
      `edgerl import: line 8: (line): invalid UTF-8 at byte 54 of the line (byte ${line8Start + 54} of the file)`,
      `edgerl import: line 9: (line): longer than ${defaultLimits.ingestBodyBytes} bytes (the edge's ingest body limit)`,
    ]);
    expect(result.out).toContain('imported 2 episodes (10 turns)');
    expect(result.out).toContain('8 lines refused');
    expect(result.code).toBe(1);
    expect(await query(`select ingest_key from trajectories where env = 'unsound' order by 1`)).toEqual([
      ['r-1'],
      ['r-10'],
    ]);
  });

  it('refuses a missing file and bad flags as usage errors', async () => {
    const missing = await run(['import', join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('cannot read');
    const badBatch = await run(['import', join(dir, 'nope.jsonl'), '--batch', '0']);
    expect(badBatch.code).toBe(2);
    expect(badBatch.err).toContain('--batch');
  });
});
