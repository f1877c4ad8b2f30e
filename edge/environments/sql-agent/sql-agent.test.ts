import { describe, expect, it } from 'vitest';
import { InMemoryTrajectorySink } from '../../episode/in-memory-trajectory-sink.ts';
import { runEpisode } from '../../episode/run-episode.ts';
import { ScriptedPolicyClient, textReply, toolCallReply } from '../../policy/scripted-policy-client.ts';
import type { ReadOnlySql, SqlQueryOptions, SqlRows } from '../../../protocol/read-only-sql.ts';
import { sqlAgent } from './sql-agent.ts';
import { type SqlTask, sqlTasks } from './sql-tasks.ts';

/** An error shaped like the ones pg, PGlite and Neon raise: a message and a SQLSTATE in `code`. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * A stand-in for the store's read-only connection: answers known query texts, records every call,
 * and fails the test on a query it was not told about.
 */
class ReadOnlySqlStandIn implements ReadOnlySql {
  readonly calls: { sql: string; options: SqlQueryOptions }[] = [];
  constructor(private readonly answers: Record<string, SqlRows | Error>) {}
  async query(sql: string, options: SqlQueryOptions): Promise<SqlRows> {
    this.calls.push({ sql, options });
    const answer = this.answers[sql];
    if (answer === undefined) throw new Error(`ReadOnlySqlStandIn: unexpected query ${JSON.stringify(sql)}`);
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

const task = sqlTasks.find((candidate) => candidate.id === 'customers-in-paris') as SqlTask;
const parisSql = "SELECT name FROM customers WHERE city = 'Paris'";
// What the database would answer, in another order than the task's (the question asks for none).
const parisRows: SqlRows = {
  columns: ['name'],
  rows: [['Umar Aziz'], ['Ada Lovelace'], ['Dev Patel'], ['Kemi Adeyemi'], ['Elena Rossi']],
};

async function play(
  answers: Record<string, SqlRows | Error>,
  steps: ConstructorParameters<typeof ScriptedPolicyClient>[0],
) {
  const sql = new ReadOnlySqlStandIn(answers);
  const policy = new ScriptedPolicyClient(steps);
  const sink = new InMemoryTrajectorySink();
  const result = await runEpisode({
    environment: sqlAgent,
    task,
    policy,
    sink,
    model: 'agent@1',
    capabilities: { sql },
    deps: { sleep: async () => {}, random: () => 0, now: () => 0 },
  });
  policy.assertDone();
  const tools = sink.turns.filter((turn) => turn.role === 'tool');
  return { result, sql, sink, tools };
}

const call = (sqlText: string) => toolCallReply([{ name: 'query', arguments: { sql: sqlText } }]);
const answer = (sqlText: string) => textReply(`\`\`\`sql\n${sqlText}\n\`\`\``);

describe('sql-agent query tool', () => {
  it('refuses writes and multiple statements before the database is asked, as observations', async () => {
    const { tools, sql, result } = await play({}, [
      call("INSERT INTO customers (id, name) VALUES (99, 'Eve')"),
      call('UPDATE products SET price = 0'),
      call('DROP TABLE orders'),
      call('SELECT 1; DELETE FROM orders'),
      textReply('I cannot answer.'),
    ]);
    expect(sql.calls).toEqual([]);
    expect(tools.map((turn) => turn.toolError)).toEqual(['refused', 'refused', 'refused', 'refused']);
    expect(JSON.parse(tools[3]?.content ?? '')).toEqual({
      error: 'only one statement per query is allowed, found 2',
    });
    expect(result).toMatchObject({
      status: 'finished',
      reward: 0,
      detail: 'the final answer holds no SQL query',
    });
  });

  it('passes the database’s refusals and errors on as observations, and shows results as a table', async () => {
    const slow = 'SELECT count(*) FROM orders a, orders b, orders c, orders d';
    const write = 'SELECT * FROM orders FOR SHARE';
    const typo = 'SELECT nme FROM customers';
    const spill = 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r';
    const { tools, sql, result } = await play(
      {
        [slow]: pgError('57014', 'canceling statement due to statement timeout'),
        [spill]: pgError('53400', 'temporary file size exceeds temp_file_limit (65536kB)'),
        [write]: pgError('25006', 'cannot execute SELECT FOR SHARE in a read-only transaction'),
        [typo]: pgError('42703', 'column "nme" does not exist'),
        [parisSql]: parisRows,
      },
      [call(slow), call(spill), call(write), call(typo), call(parisSql), answer(parisSql)],
    );
    expect(tools.map((turn) => [turn.toolError ?? null, turn.content])).toEqual([
      [
        'refused',
        JSON.stringify({ error: 'the query was cancelled after running 1000 ms; make it cheaper' }),
      ],
      [
        'refused',
        JSON.stringify({
          error: 'the query spilled more to disk than the sandbox allows (temp_file_limit); make it cheaper',
        }),
      ],
      ['refused', JSON.stringify({ error: 'the database is read-only' })],
      ['tool-error', JSON.stringify({ error: 'query failed: column "nme" does not exist' })],
      [null, 'name\nUmar Aziz\nAda Lovelace\nDev Patel\nKemi Adeyemi\nElena Rossi\n(5 rows)'],
    ]);
    // The tool asks for one row past the 30 it shows; the verifier for up to 1000; both with a 1 s timeout.
    expect(sql.calls[0]?.options).toEqual({ timeoutMs: 1000, maxRows: 31 });
    expect(sql.calls.at(-1)).toEqual({ sql: parisSql, options: { timeoutMs: 1000, maxRows: 1000 } });
    expect(result).toMatchObject({ status: 'finished', reward: 1, detail: 'result matches' });
  });
  it('reads errors wrapped the way the store wraps them: its own refusal, and SQLSTATEs in the cause', async () => {
    // Shaped like db/'s StoreError: a `code` of its own, the driver's error (with the SQLSTATE) as cause.
    const storeError = (code: string, message: string, cause?: Error) =>
      Object.assign(new Error(message, { cause }), { code });
    const values = 'SELECT * FROM orders ORDER BY id';
    const slow = 'SELECT count(*) FROM order_items a, order_items b';
    const typo = 'SELECT nme FROM customers';
    const { tools } = await play(
      {
        [values]: storeError('query-refused', 'only one statement is allowed, got 2'),
        [slow]: storeError(
          'query-failed',
          'canceling statement due to statement timeout (SQLSTATE 57014)',
          pgError('57014', 'canceling statement due to statement timeout'),
        ),
        [typo]: storeError(
          'query-failed',
          'column "nme" does not exist (SQLSTATE 42703)',
          pgError('42703', 'column "nme" does not exist'),
        ),
      },
      [call(values), call(slow), call(typo), textReply('no idea')],
    );
    expect(tools.map((turn) => [turn.toolError, JSON.parse(turn.content ?? '').error])).toEqual([
      ['refused', 'only one statement is allowed, got 2'],
      ['refused', 'the query was cancelled after running 1000 ms; make it cheaper'],
      ['tool-error', 'query failed: column "nme" does not exist (SQLSTATE 42703)'],
    ]);
  });
});

describe('sql-agent verifier', () => {
  it('scores a final query by its result, in any row order for an unordered question', async () => {
    const wrong = "SELECT name FROM customers WHERE country = 'France'";
    const { result } = await play(
      { [wrong]: { columns: ['name'], rows: [...parisRows.rows, ['Nils Larsen']] } },
      [answer(wrong)],
    );
    expect(result).toMatchObject({ status: 'finished', reward: 0, detail: 'expected 5 rows, got 6' });
  });

  it('scores 0 for a final query that is refused or fails, and fails the episode when the database is down', async () => {
    const refused = await play({}, [textReply('DELETE FROM customers')]);
    expect(refused.result).toMatchObject({ reward: 0, detail: 'the final answer holds no SQL query' });
    const twoStatements = await play({}, [answer('SELECT 1; SELECT 2')]);
    expect(twoStatements.result).toMatchObject({
      reward: 0,
      detail: 'the final query was refused: only one statement per query is allowed, found 2',
    });
    const wrapped = 'SELECT name FROM client';
    const failingWrapped = await play(
      {
        [wrapped]: Object.assign(
          new Error('relation "client" does not exist (SQLSTATE 42P01)', { cause: pgError('42P01', 'x') }),
          {
            code: 'query-failed',
          },
        ),
      },
      [answer(wrapped)],
    );
    expect(failingWrapped.result).toMatchObject({ status: 'finished', reward: 0 });
    const missing = 'SELECT name FROM clients';
    const failing = await play({ [missing]: pgError('42P01', 'relation "clients" does not exist') }, [
      answer(missing),
    ]);
    expect(failing.result).toMatchObject({
      reward: 0,
      detail: 'the final query failed: relation "clients" does not exist',
    });
    const down = await play({ [parisSql]: new Error('connect ECONNREFUSED 127.0.0.1:5432') }, [
      answer(parisSql),
    ]);
    expect(down.result).toMatchObject({
      status: 'error',
      errorReason: 'verifier: connect ECONNREFUSED 127.0.0.1:5432',
    });
    expect(down.sink.turns).toHaveLength(3);
  });
});

describe('sql-agent tasks', () => {
  it('samples reproducibly within a split, and lists each task once per pass', () => {
    expect(sqlAgent.sampleTask('eval', 4)).toEqual(sqlAgent.sampleTask('eval', 4));
    expect(sqlAgent.sampleTask('eval', 4).split).toBe('eval');
    const evalCount = sqlTasks.filter((candidate) => candidate.split === 'eval').length;
    const twoPasses = sqlAgent.tasks('eval', 2 * evalCount, 9);
    const firstPass = new Set(twoPasses.slice(0, evalCount).map((candidate) => candidate.id));
    const secondPass = new Set(twoPasses.slice(evalCount).map((candidate) => candidate.id));
    expect(firstPass.size).toBe(evalCount);
    expect(secondPass).toEqual(firstPass);
  });

  it('refuses to start without the sql capability', async () => {
    const policy = new ScriptedPolicyClient([]);
    await expect(
      runEpisode({ environment: sqlAgent, task, policy, sink: new InMemoryTrajectorySink(), model: 'm' }),
    ).rejects.toThrow('environment sql-agent needs capabilities.sql');
  });
});
