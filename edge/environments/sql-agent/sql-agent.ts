// The SQL agent: answer questions about the sample shop with read-only queries. One tool, `query`;
// the episode ends with the model's final query, which the verifier runs and compares with the
// task's known result. Needs the `sql` capability (the store's read-only connection).
import { z } from 'zod';
import type { TaskSplit } from '../../../protocol/statuses.ts';
import {
  defineEnvironment,
  type VerifierContext,
  type VerifierInput,
  type VerifierResult,
} from '../environment.ts';
import type { ReadOnlySql, SqlRows } from '../../../protocol/read-only-sql.ts';
import { randomInt, seededRandom, shuffled } from '../seeded-random.ts';
import { defineTool, type ToolContext } from '../tool.ts';
import { ToolRefusal } from '../tool-refusal.ts';
import { checkReadOnlySql } from './check-read-only-sql.ts';
import { compareResultSets } from './compare-result-sets.ts';
import { extractFinalSql } from './extract-final-sql.ts';
import { formatSqlResult } from './format-sql-result.ts';
import { sampleSchemaDescription } from './sample-schema.ts';
import { isQueryFault, isRefusedStatement, refusalOf, sqlStateOf } from './sql-error.ts';
import { type SqlTask, sqlTasks, sqlTaskSchema } from './sql-tasks.ts';
import { errorMessage } from '../../../protocol/error-message.ts';

export const sqlAgentLimits = {
  /** Statement timeout: every sample query runs in milliseconds; a second is a runaway (a cross join). */
  statementTimeoutMs: 1_000,
  /** Rows shown to the model; every answer in the task list has at most 20. */
  shownRows: 30,
  /** Rows the verifier compares: beyond any expected answer, small enough to bound a runaway result. */
  verifierMaxRows: 1_000,
} as const;

function requireSql(sql: ReadOnlySql | undefined): ReadOnlySql {
  if (!sql) throw new Error('the sql capability is missing');
  return sql;
}

/** Runs a checked query; database refusals become ToolRefusal, query errors stay errors with their message. */
export async function runReadOnlyQuery(sql: ReadOnlySql, text: string, maxRows: number) {
  const check = checkReadOnlySql(text);
  if (!check.ok) throw new ToolRefusal(check.reason);
  try {
    return await sql.query(text, { timeoutMs: sqlAgentLimits.statementTimeoutMs, maxRows });
  } catch (error) {
    if (isRefusedStatement(error)) throw new ToolRefusal(errorMessage(error), { cause: error });
    const refusal = refusalOf(sqlStateOf(error), sqlAgentLimits.statementTimeoutMs);
    if (refusal) throw new ToolRefusal(refusal, { cause: error });
    throw error;
  }
}

const query = defineTool({
  name: 'query',
  description: 'Run one read-only SQL query (PostgreSQL) on the shop database.',
  parameters: z.object({ sql: z.string().min(1).describe('a single SELECT or WITH statement') }),
  // Above the statement timeout, so the database's own cancellation (a clear refusal) comes first.
  timeoutMs: 5_000,
  async run({ sql }, context: ToolContext<SqlTask>) {
    // One row past what is shown tells the model there is more.
    const result = await runReadOnlyQuery(requireSql(context.sql), sql, sqlAgentLimits.shownRows + 1);
    return formatSqlResult(result, sqlAgentLimits.shownRows);
  },
});

async function verify(input: VerifierInput<SqlTask>, context: VerifierContext): Promise<VerifierResult> {
  if (input.finalAnswer === null) return { reward: 0, detail: 'no final answer' };
  const finalSql = extractFinalSql(input.finalAnswer);
  if (!finalSql) return { reward: 0, detail: 'the final answer holds no SQL query' };
  let rows: SqlRows['rows'];
  try {
    ({ rows } = await runReadOnlyQuery(requireSql(context.sql), finalSql, sqlAgentLimits.verifierMaxRows));
  } catch (error) {
    // The model's query being wrong scores 0; the database being unreachable is not the model's doing.
    if (error instanceof ToolRefusal)
      return { reward: 0, detail: `the final query was refused: ${error.message}` };
    if (isQueryFault(sqlStateOf(error))) {
      return {
        reward: 0,
        detail: `the final query failed: ${errorMessage(error)}`,
      };
    }
    throw error;
  }
  const comparison = compareResultSets(input.task.expected, rows, { ordered: input.task.ordered });
  return comparison.equal
    ? { reward: 1, detail: 'result matches' }
    : { reward: 0, detail: comparison.reason };
}

export const sqlAgentSystemPrompt = `Answer questions about a shop database (PostgreSQL) with SQL. Use the query tool to explore and test.
When done, reply with only the final query in a \`\`\`sql block. Return exactly the columns asked for, in that order.
Tables:
${sampleSchemaDescription}`;

function tasksOf(split: TaskSplit): readonly SqlTask[] {
  const pool = sqlTasks.filter((task) => task.split === split);
  if (pool.length === 0) throw new Error(`sql-agent has no ${split} tasks`);
  return pool;
}

export const sqlAgent = defineEnvironment<SqlTask>({
  name: 'sql-agent',
  description: 'Answer questions about a small shop database with read-only SQL queries.',
  systemPrompt: sqlAgentSystemPrompt,
  tools: [query],
  // Room to look at a table or two, test a query, fix it and answer.
  maxTurns: 8,
  requires: ['sql'],
  taskSchema: sqlTaskSchema,
  sampleTask(split, seed) {
    const pool = tasksOf(split);
    return pool[randomInt(seededRandom(seed), pool.length)] as SqlTask;
  },
  /** Each task once per pass, in a seeded order; passes repeat when n exceeds the split. */
  tasks(split, n, seed) {
    const random = seededRandom(seed);
    const pool = tasksOf(split);
    const out: SqlTask[] = [];
    while (out.length < n) out.push(...shuffled(pool, random).slice(0, n - out.length));
    return out;
  },
  verify,
});
