// Appending the turns of one step (an assistant turn and its tool results, or a proxied request's new
// messages and its reply) in ONE autocommitted statement: one round trip. Idempotent on (trajectory,
// index); a conflicting turn, a gap, a finished trajectory or a lost lease is refused with a typed
// error, which a second query explains only when the statement appended nothing (append-refusal.ts).
//
// Concurrency (READ COMMITTED): the statement's UPDATE of the trajectory row both validates (running,
// turn_count = the first index, the runner's lease) and locks it. A second writer of the same index
// blocks on that row lock; when the first commits, Postgres re-evaluates the second's WHERE against
// the row's new version (the EvalPlanQual recheck, "Transaction Isolation", Postgres manual 13.2.1),
// finds turn_count moved on, and updates nothing, so the INSERT fed by its RETURNING inserts nothing.
// The INSERT carries no ON CONFLICT on purpose: a row already at an index the counter says is free
// (written around the store) must abort the whole statement, counter bump included; DO NOTHING would
// commit the bump without the turn. The idempotent repeat never reaches the INSERT: its index is
// below turn_count, so the UPDATE matches nothing and the refusal's explanation finds the stored twin.
import { type Turn, type TurnInput, turnInputSchema } from '../../protocol/turn.ts';
import { type SQL, sql } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { findPostgresError } from '../database-errors.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import { type AppendTurnResult, explainRefusal } from './append-refusal.ts';
import { parseInput } from './parse-input.ts';
import { emptyHistoryDigest, historyEntry } from '../../protocol/history-digest.ts';
import { type TrajectoryLease, trajectoryLeaseSchema } from './trajectory-leases.ts';
import { type NewTurnRow, toTurnRow } from './turn-row.ts';

export type { AppendTurnResult } from './append-refusal.ts';

/** Fields a model or a proxy client fills with free text: kept (escaped when needed), never refused. */
const keptTurnText = ['content', 'toolCalls', 'toolCallId', 'servedBy', 'metadata'];

/** Turns of one call, most a step holds; far above any real step, and it bounds the statement. */
export const maxTurnsPerAppend = 10_000;

/**
 * Appends consecutive turns of one trajectory, all or none. A refused batch whose leading turns are
 * already stored (a retried step) stores the rest after checking the stored ones match.
 */
export async function appendTurns(
  db: StoreDb,
  inputs: readonly TurnInput[],
  leaseInput?: TrajectoryLease,
): Promise<AppendTurnResult[]> {
  if (inputs.length === 0) return [];
  const turns = parseTurns(inputs);
  const lease = leaseInput ? parseInput(trajectoryLeaseSchema, leaseInput, 'lease') : undefined;
  return appendParsed(db, turns, lease);
}

/** A statement that raced a concurrent change may be retried this often before giving up. */
const maxAttempts = 3;

async function appendParsed(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
): Promise<AppendTurnResult[]> {
  const first = turns[0] as Turn;
  for (let attempt = 1; ; attempt++) {
    if (await insertStep(db, turns, lease)) {
      return turns.map((turn) => ({ trajectoryId: turn.trajectoryId, index: turn.index, created: true }));
    }
    const refusal = await explainRefusal(db, turns, lease);
    if (refusal.kind === 'repeated') return refusal.results;
    if (refusal.kind === 'rest') {
      // The leading turns were stored by an earlier try of this step: store what is left.
      const rest = await appendParsed(db, refusal.rest, lease);
      return [...refusal.results, ...rest];
    }
    // `retry`: the state allowed the append when explained, so the row moved between the two queries.
    if (attempt >= maxAttempts) {
      throw new StoreError(
        'conflict',
        `turn ${first.index} of trajectory ${first.trajectoryId} could not be appended: the trajectory kept changing`,
      );
    }
  }
}

function parseTurns(inputs: readonly TurnInput[]): Turn[] {
  if (inputs.length > maxTurnsPerAppend) {
    throw new StoreError('validation', `turns: at most ${maxTurnsPerAppend} turns per append`);
  }
  const turns = inputs.map((input) => parseInput(turnInputSchema, input, 'turn', { keepText: keptTurnText }));
  const first = turns[0] as Turn;
  for (const [offset, turn] of turns.entries()) {
    if (turn.trajectoryId !== first.trajectoryId) {
      throw new StoreError(
        'validation',
        `turns.${offset}: trajectoryId: one append takes turns of one trajectory`,
      );
    }
    if (turn.index !== first.index + offset) {
      throw new StoreError(
        'validation',
        `turns.${offset}: index: must be ${first.index + offset} (one append takes consecutive indexes)`,
      );
    }
  }
  return turns;
}

/** The one statement. True when it appended every turn; false when the trajectory's state refused it. */
async function insertStep(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
): Promise<boolean> {
  const first = turns[0] as Turn;
  const rows = turns.map((turn) => recordOf(toTurnRow(turn)));
  // The history entry is of the turn as given, not of its escaped row: the digest covers the text.
  const entries = turns.map((turn) => historyEntry(turn));
  const sum = (value: (turn: Turn) => number) => turns.reduce((total, turn) => total + value(turn), 0);
  const renewal: SQL = lease
    ? sql`, heartbeat_at = now(), lease_expires_at = now() + ${lease.leaseSeconds}::double precision * interval '1 second'`
    : sql``;
  const heldBy: SQL = lease ? sql` and runner = ${lease.runner}` : sql``;
  // One jsonb parameter carries every row (multi-row VALUES would take 14 parameters a turn, and
  // Postgres allows 65,535); jsonb_to_recordset types each column, JSON arrays into int4[] / float8[].
  // Numbers keep their bits: JSON.stringify writes the shortest decimal that reads back to the same
  // float64, jsonb keeps that decimal as numeric, and float8in reads it back exactly.
  // Each turn's history digest (protocol/history-digest.ts) chains from the one before it, so the
  // statement computes the chain itself (a recursive CTE, one step per turn) from the stored digest of
  // the turn before the first: the caller need not know it, and an episode's appends and a proxied
  // call's give one chain. A null digest before (a turn stored before the column) leaves the new ones
  // null too: readers then compare the turns themselves. Each step takes its entry by position from
  // one jsonb array (constant time), not by joining the step's rows, which would cost the square of
  // the step's length.
  const previous: SQL =
    first.index === 0
      ? sql`${emptyHistoryDigest}::text`
      : sql`(select history_digest from turns where trajectory_id = ${first.trajectoryId}::uuid and index = ${first.index - 1}::int)`;
  const statement = sql`
    with recursive advanced as (
      update trajectories set
        turn_count = turn_count + ${turns.length}::int,
        prompt_token_count = prompt_token_count + ${sum((turn) => turn.promptTokenCount ?? 0)}::bigint,
        completion_token_count = completion_token_count + ${sum((turn) => turn.completionTokenIds?.length ?? 0)}::bigint,
        latency_ms = latency_ms + ${sum((turn) => turn.latencyMs ?? 0)}::double precision${renewal}
      where id = ${first.trajectoryId}::uuid and status = 'running' and turn_count = ${first.index}::int${heldBy}
      returning id
    ), entries as materialized (
      select ${JSON.stringify(entries)}::jsonb as list
    ), chain (position, digest) as (
      select 0, ${previous}
      union all
      select chain.position + 1,
        encode(sha256(decode(chain.digest, 'hex') || convert_to(entries.list ->> chain.position, 'UTF8')), 'hex')
      from chain cross join entries
      where chain.position < ${turns.length}::int
    ), inserted as (
      insert into turns (trajectory_id, index, schema_version, role, content, tool_calls, tool_call_id,
        tool_error, completion_token_ids, completion_logprobs, prompt_token_count, served_by, latency_ms,
        metadata, text_encoding, history_digest)
      select advanced.id, r.index, r.schema_version, r.role, r.content, r.tool_calls, r.tool_call_id,
        r.tool_error, r.completion_token_ids, r.completion_logprobs, r.prompt_token_count, r.served_by,
        r.latency_ms, r.metadata, r.text_encoding, chain.digest
      from advanced cross join jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(
        index int, schema_version int, role text, content text, tool_calls jsonb, tool_call_id text,
        tool_error text, completion_token_ids int[], completion_logprobs double precision[],
        prompt_token_count int, served_by text, latency_ms double precision, metadata jsonb,
        text_encoding text)
      join chain on chain.position = r.index - ${first.index - 1}::int
      returning 1
    )
    select count(*)::int as appended from inserted`;
  let appended: number;
  try {
    const [row] = rowsOf<{ appended: number }>(await db.execute(statement));
    appended = Number(row?.appended ?? 0);
  } catch (error) {
    if (findPostgresError(error)?.code === '23505') {
      // Only possible if rows were written around the store (turn_count behind the turns table).
      throw new StoreError(
        'conflict',
        `turn ${first.index} of trajectory ${first.trajectoryId} already exists`,
        { cause: error },
      );
    }
    throw error;
  }
  return appended === turns.length;
}

/** A row as jsonb_to_recordset reads it: keys named as the columns, absent values as JSON null. */
function recordOf(row: NewTurnRow): Record<string, unknown> {
  return {
    index: row.index,
    schema_version: row.schemaVersion,
    role: row.role,
    content: row.content ?? null,
    tool_calls: row.toolCalls ?? null,
    tool_call_id: row.toolCallId ?? null,
    tool_error: row.toolError ?? null,
    completion_token_ids: row.completionTokenIds ?? null,
    completion_logprobs: row.completionLogprobs ?? null,
    prompt_token_count: row.promptTokenCount ?? null,
    served_by: row.servedBy ?? null,
    latency_ms: row.latencyMs ?? null,
    metadata: row.metadata ?? null,
    text_encoding: row.textEncoding ?? 'plain',
  };
}
