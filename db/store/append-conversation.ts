// Appending the recording proxy's exchange: a conversation's turns from some index on (the request's
// messages the caller believes are new, and the reply last), of which the statement stores those the
// trajectory does not hold yet, after checking that the history before them is the stored one. One
// autocommitted statement both checks and appends, so a proxied call needs no read before it when the
// caller knows the trajectory's head (the edge keeps it from the call before: edge/proxy/trajectory-heads.ts).
//
// The check is the proxy's (edge/proxy/new-messages.ts) by digest (protocol/history-digest.ts): with
// c turns stored, the call is taken when `from` ≤ c ≤ the reply's index and the conversation's digest
// at c - 1 is the stored one. The caller gives the digest of the history before `from`, and the
// statement gets each given turn's digest, chained from it here, so c may be past `from` (the caller's
// head was stale: another edge stored some of the turns): those are skipped when their digests agree.
// Otherwise nothing is stored and the refusal is a typed error, explained from the same statement's
// reading of the row: `not-found`, `trajectory-owned` or `trajectory-key` (only a client trajectory,
// with its key, is written here: trajectory-access.ts), `trajectory-closed`, or `history-mismatch`
// (the caller reads the stored turns to say where, or how many there are).
//
// Concurrency (READ COMMITTED): the check reads the row from the statement's snapshot; the UPDATE
// then requires turn_count to be what the check read. A concurrent append that committed in between
// moves it on, Postgres re-evaluates the UPDATE's WHERE on the new row version (EvalPlanQual,
// "Transaction Isolation", Postgres manual 13.2.1), nothing is updated or inserted, and the statement
// runs again from the new state.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { type ToolSpec, toolSpecListSchema } from '../../protocol/chat.ts';
import { historyDigests, historyEntry } from '../../protocol/history-digest.ts';
import type { TrajectoryWriter } from '../../protocol/trajectory-writer.ts';
import type { Turn, TurnInput } from '../../protocol/turn.ts';
import { StoreError } from '../errors.ts';
import { executeNamed } from '../named-statement.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import {
  insertedTurnColumns,
  parseTurnBatch,
  recordColumns,
  turnRecord,
  turnRecordColumns,
} from './append-rows.ts';
import { turnExistsError } from './append-refusal.ts';
import { parseInput } from './parse-input.ts';
import { accessCondition, accessRefusal, type TrajectoryAccess } from './trajectory-access.ts';
import { fromTrajectoryRow, toStoredTools } from './trajectory-row.ts';

export interface AppendConversationInput {
  /** Consecutive turns of one trajectory: the first at the index the caller believes is next, the reply last. */
  readonly turns: readonly TurnInput[];
  /** The history digest of the turns before the first (`''` before turn 0). */
  readonly previousDigest: string;
  /** The tool list to store with the turns; absent: the stored list stands. */
  readonly tools?: readonly ToolSpec[];
  /**
   * The digest of the trajectory key the client gave (trajectory-access.ts): required when the
   * trajectory has one; absent, only a keyless client trajectory (opened before keys) is written.
   */
  readonly keyDigest?: string;
}

export interface AppendConversationResult {
  /** The first index this call stored: the first turn's, unless the trajectory already held some of them. */
  readonly firstAppended: number;
  /** The history digest of the last turn (the trajectory's new head). */
  readonly historyDigest: string;
  /**
   * The stored tool list, when the trajectory already held some of the turns (the caller's view of it
   * was stale, so its tool list may be too) and the call set none; otherwise undefined.
   */
  readonly storedTools?: ToolSpec[] | null;
}

const optionsSchema = z.object({
  previousDigest: z
    .string()
    .regex(/^(?:[0-9a-f]{64})?$/, 'must be a hex SHA-256 digest, or empty before turn 0'),
  tools: toolSpecListSchema.optional(),
  keyDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256 digest')
    .optional(),
});

/** A statement that raced a concurrent append runs again from the new state, this often at most. */
const maxAttempts = 3;

interface Outcome {
  readonly status: string;
  readonly turn_count: number;
  readonly appended_from: number | null;
  readonly stored_tools: ToolSpec[] | null;
  readonly tools_encoding: 'plain' | 'escaped';
  readonly checked: boolean;
  readonly writer: TrajectoryWriter;
  readonly key_digest: string | null;
}

export async function appendConversation(
  db: StoreDb,
  input: AppendConversationInput,
): Promise<AppendConversationResult> {
  if (input.turns.length === 0) throw new StoreError('validation', 'turns: at least the reply');
  const turns = parseTurnBatch(input.turns);
  const { previousDigest, tools, keyDigest } = parseInput(
    optionsSchema,
    { previousDigest: input.previousDigest, tools: input.tools, keyDigest: input.keyDigest },
    'appendConversation',
    { keepText: ['tools'] },
  );
  const digests = historyDigests(
    turns.map((turn) => historyEntry(turn)),
    previousDigest,
  );
  const access: TrajectoryAccess = { writer: 'client', ...(keyDigest !== undefined ? { keyDigest } : {}) };
  for (let attempt = 1; ; attempt++) {
    const outcome = await runStatement(db, turns, digests, previousDigest, tools, access);
    const first = turns[0] as Turn;
    if (outcome === undefined)
      throw new StoreError('not-found', `trajectory ${first.trajectoryId} does not exist`);
    const refused = accessRefusal(
      { writer: outcome.writer, keyDigest: outcome.key_digest },
      access,
      first.trajectoryId,
    );
    if (refused) throw refused;
    if (outcome.appended_from !== null) {
      const stale = outcome.appended_from !== first.index && tools === undefined;
      return {
        firstAppended: outcome.appended_from,
        historyDigest: digests.at(-1) as string,
        ...(stale ? { storedTools: storedTools(outcome) } : {}),
      };
    }
    if (outcome.status !== 'running') {
      throw new StoreError(
        'trajectory-closed',
        `trajectory ${first.trajectoryId} is ${outcome.status}; it takes no more turns`,
      );
    }
    if (!outcome.checked) {
      throw new StoreError(
        'history-mismatch',
        `trajectory ${first.trajectoryId} holds ${outcome.turn_count} turns whose history differs from the conversation given from turn ${first.index}`,
      );
    }
    // The check passed on the snapshot but the row moved on before the UPDATE: run again.
    if (attempt >= maxAttempts) {
      throw new StoreError(
        'conflict',
        `turn ${first.index} of trajectory ${first.trajectoryId} could not be appended: the trajectory kept changing`,
      );
    }
  }
}

function storedTools(outcome: Outcome): ToolSpec[] | null {
  return fromTrajectoryRow({ tools: outcome.stored_tools, textEncoding: outcome.tools_encoding } as never)
    .tools as ToolSpec[] | null;
}

/** The one statement; undefined when the trajectory does not exist. */
async function runStatement(
  db: StoreDb,
  turns: readonly Turn[],
  digests: readonly string[],
  previousDigest: string,
  tools: ToolSpec[] | undefined,
  access: TrajectoryAccess,
): Promise<Outcome | undefined> {
  const first = turns[0] as Turn;
  const last = turns[turns.length - 1] as Turn;
  const rows = turns.map((turn, offset) => turnRecord(turn, digests[offset]));
  const stored = tools === undefined ? undefined : toStoredTools(tools);
  // Every value is a parameter, so the text never changes: one prepared statement (named-statement.ts).
  const statement = sql`
    with sent as materialized (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(${turnRecordColumns(true)})
    ), found as materialized (
      select t.status, t.turn_count, t.tools, t.text_encoding, t.writer, t.key_digest,
        case when t.turn_count = 0 then '' else (select d.history_digest from turns d
          where d.trajectory_id = t.id and d.index = t.turn_count - 1) end as stored_digest
      from trajectories t where t.id = ${first.trajectoryId}::uuid
    ), checked as materialized (
      select found.turn_count as start from found
      where found.status = 'running'${accessCondition(access, 'found')} and found.turn_count between ${first.index}::int and ${last.index}::int
        and found.stored_digest = case when found.turn_count = ${first.index}::int then ${previousDigest}::text
          else (select sent.history_digest from sent where sent.index = found.turn_count - 1) end
    ), advanced as (
      update trajectories t set
        turn_count = ${last.index + 1}::int,
        prompt_token_count = t.prompt_token_count
          + (select coalesce(sum(s.prompt_token_count), 0) from sent s where s.index >= checked.start),
        completion_token_count = t.completion_token_count
          + (select coalesce(sum(cardinality(s.completion_token_ids)), 0) from sent s where s.index >= checked.start),
        latency_ms = t.latency_ms
          + (select coalesce(sum(s.latency_ms), 0) from sent s where s.index >= checked.start),
        tools = coalesce(${stored ? JSON.stringify(stored.tools) : null}::jsonb, t.tools),
        text_encoding = coalesce(${stored?.textEncoding ?? null}::text, t.text_encoding)
      from checked
      where t.id = ${first.trajectoryId}::uuid and t.status = 'running' and t.turn_count = checked.start
      returning checked.start
    ), inserted as (
      insert into turns (${insertedTurnColumns})
      select ${first.trajectoryId}::uuid, ${recordColumns}, r.history_digest, 'client'
      from sent r join advanced on r.index >= advanced.start
      returning 1
    )
    select found.status, found.turn_count,
      (select advanced.start from advanced) as appended_from,
      exists (select 1 from checked) as checked,
      case when found.turn_count <> ${first.index}::int then found.tools end as stored_tools,
      found.text_encoding as tools_encoding, found.writer, found.key_digest
    from found`;
  try {
    const [row] = rowsOf<Outcome>(await executeNamed(db, statement));
    return row;
  } catch (error) {
    throw turnExistsError(error, first);
  }
}
