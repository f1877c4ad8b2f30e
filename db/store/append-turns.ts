// Appending the turns of one step (an assistant turn and its tool results, or a proxied request's new
// messages and its reply) in ONE autocommitted statement: one round trip. Idempotent on (trajectory,
// index); another writer's trajectory (trajectory-access.ts), a conflicting turn, a gap, a finished
// trajectory or a lost lease is refused with a typed
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
import type { Turn, TurnInput } from '../../protocol/turn.ts';
import { type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { executeNamed } from '../named-statement.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import { type AppendTurnResult, explainRefusal, turnExistsError } from './append-refusal.ts';
import {
  insertedTurnColumns,
  parseTurnBatch,
  recordColumns,
  turnRecord,
  turnRecordColumns,
} from './append-rows.ts';
import {
  type FinishTrajectoryInput,
  type FinishTrajectoryResult,
  finishAssignments,
  finishedRow,
  finishTrajectory,
  groupCompletion,
  parseFinish,
} from './finish-trajectory.ts';
import { parseInput } from './parse-input.ts';
import { emptyHistoryDigest, historyEntry } from '../../protocol/history-digest.ts';
import { accessCondition, type ClientKey, type TrajectoryAccess } from './trajectory-access.ts';
import { appendLeaseExpiry, type TrajectoryLease, trajectoryLeaseSchema } from './trajectory-leases.ts';

export type { AppendTurnResult } from './append-refusal.ts';

type ParsedFinish = ReturnType<typeof parseFinish>;

/**
 * Appends consecutive turns of one trajectory, all or none. A refused batch whose leading turns are
 * already stored (a retried step) stores the rest after checking the stored ones match.
 */
export async function appendTurns(
  db: StoreDb,
  inputs: readonly TurnInput[],
  by?: TrajectoryLease | ClientKey,
): Promise<AppendTurnResult[]> {
  if (inputs.length === 0) return [];
  const turns = parseTurnBatch(inputs);
  const lease = by && 'runner' in by ? parseInput(trajectoryLeaseSchema, by, 'lease') : undefined;
  const key = by && 'keyDigest' in by ? parseInput(keyDigestSchema, by.keyDigest, 'keyDigest') : undefined;
  return appendParsed(db, turns, lease, writeAccess(lease, key));
}

const keyDigestSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256 digest');

/** A runner with its lease, or a client (with the digest of the key it gave, if any). */
function writeAccess(lease: TrajectoryLease | undefined, keyDigest: string | undefined): TrajectoryAccess {
  if (lease) return { writer: 'runner', runner: lease.runner };
  return { writer: 'client', ...(keyDigest !== undefined ? { keyDigest } : {}) };
}

export interface FinalTurnsInput {
  /** The episode's last step: consecutive turns of one trajectory, possibly none. */
  readonly turns: readonly TurnInput[];
  /** How the trajectory ends (finishTrajectory's input without the trajectory and runner). */
  readonly finish: Omit<FinishTrajectoryInput, 'trajectoryId' | 'runner'>;
  /** The runner's lease: refused (`lease-lost`) when another runner holds the episode. */
  readonly lease?: TrajectoryLease;
}

export interface FinalTurnsResult {
  readonly turns: AppendTurnResult[];
  readonly finished: FinishTrajectoryResult;
}

/**
 * An episode's last step and its end in ONE statement: the append's UPDATE also ends the trajectory
 * and its group counts it, as finishTrajectory does. Refused (a retry after a lost answer, a runner
 * taken over, a closed trajectory), it does what the two calls would: appendTurns, which explains
 * the refusal (a repeat of stored turns is a no-op), then finishTrajectory (a repeated finish is too).
 */
export async function appendFinalTurns(db: StoreDb, input: FinalTurnsInput): Promise<FinalTurnsResult> {
  const turns = input.turns.length > 0 ? parseTurnBatch(input.turns) : [];
  const lease = input.lease ? parseInput(trajectoryLeaseSchema, input.lease, 'lease') : undefined;
  const first = turns[0];
  if (!first) throw new StoreError('validation', 'turns: the last step needs at least one turn');
  const finishInput: FinishTrajectoryInput = {
    ...input.finish,
    trajectoryId: first.trajectoryId,
    ...(lease ? { runner: lease.runner } : {}),
  };
  const finish = parseFinish(finishInput);
  const access = writeAccess(lease, undefined);
  const ended = await insertStep(db, turns, lease, access, finish);
  if (ended) {
    return {
      turns: turns.map((turn) => ({ trajectoryId: turn.trajectoryId, index: turn.index, created: true })),
      finished: ended,
    };
  }
  const appended = await appendParsed(db, turns, lease, access);
  return { turns: appended, finished: await finishTrajectory(db, finishInput) };
}

/** A statement that raced a concurrent change may be retried this often before giving up. */
const maxAttempts = 3;

async function appendParsed(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
  access: TrajectoryAccess,
): Promise<AppendTurnResult[]> {
  const first = turns[0] as Turn;
  for (let attempt = 1; ; attempt++) {
    if (await insertStep(db, turns, lease, access)) {
      return turns.map((turn) => ({ trajectoryId: turn.trajectoryId, index: turn.index, created: true }));
    }
    const refusal = await explainRefusal(db, turns, lease, access);
    if (refusal.kind === 'repeated') return refusal.results;
    if (refusal.kind === 'rest') {
      // The leading turns were stored by an earlier try of this step: store what is left.
      const rest = await appendParsed(db, refusal.rest, lease, access);
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

/**
 * The one statement. True when it appended every turn; false when the trajectory's state refused it.
 * With `finish`, the same UPDATE also ends the trajectory and the group counts it (finish-trajectory.ts):
 * then the result is the ended row, or undefined when refused.
 */
async function insertStep(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
  access: TrajectoryAccess,
): Promise<boolean>;
async function insertStep(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
  access: TrajectoryAccess,
  finish: ParsedFinish,
): Promise<FinishTrajectoryResult | undefined>;
async function insertStep(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
  access: TrajectoryAccess,
  finish?: ParsedFinish,
): Promise<boolean | FinishTrajectoryResult | undefined> {
  const first = turns[0] as Turn;
  const rows = turns.map((turn) => turnRecord(turn));
  // The history entry is of the turn as given, not of its escaped row: the digest covers the text.
  const entries = turns.map((turn) => historyEntry(turn));
  const sum = (value: (turn: Turn) => number) => turns.reduce((total, turn) => total + value(turn), 0);
  // Ending it drops the lease (finishAssignments); otherwise the runner's is renewed.
  const renewal: SQL = finish
    ? sql`, ${finishAssignments(finish)}`
    : lease
      ? sql`, heartbeat_at = now(), lease_expires_at = ${appendLeaseExpiry(lease.leaseSeconds)}`
      : sql``;
  // Only the trajectory's writer appends (trajectory-access.ts): a runner holding its lease, or the
  // client with its key; checked by the UPDATE that writes, so no caller can skip it.
  const heldBy: SQL = accessCondition(access);
  // Each turn's history digest (protocol/history-digest.ts) chains from the one before it, so the
  // statement computes the chain itself from the stored digest of the turn before the first: the
  // caller need not know it, and an episode's appends and a proxied call's give one chain. A null
  // digest before (a turn stored before the column) leaves the new ones null too: readers then compare
  // the turns themselves. One turn (the common append) is one sha256() call; a step of several is a
  // recursive CTE, one step per turn, each taking its entry by position from one jsonb array
  // (constant time), not by joining the step's rows, which would cost the square of the step's length.
  const previous: SQL =
    first.index === 0
      ? sql`${emptyHistoryDigest}::text`
      : sql`(select history_digest from turns where trajectory_id = ${first.trajectoryId}::uuid and index = ${first.index - 1}::int)`;
  const chained = (digest: SQL, entry: SQL) =>
    sql`encode(sha256(decode(${digest}, 'hex') || convert_to(${entry}, 'UTF8')), 'hex')`;
  const chain: SQL =
    turns.length === 1
      ? sql`chain (position, digest) as (select 1, ${chained(previous, sql`${entries[0]}::text`)})`
      : sql`chain (position, digest) as (
      select 0, ${previous}
      union all
      select chain.position + 1, ${chained(sql`chain.digest`, sql`entries.list ->> chain.position`)}
      from chain cross join (select ${JSON.stringify(entries)}::jsonb as list) entries
      where chain.position < ${turns.length}::int
    )`;
  // No RETURNING from the INSERT: when the UPDATE matched, every row is inserted or the statement fails.
  // The UPDATE's name tells a final step's statement from a step's (in the counting test store too).
  const updated = sql.raw(finish ? 'final_step' : 'advanced');
  const completion = groupCompletion('final_step');
  const statement = sql`
    with recursive ${updated} as (
      update trajectories set
        turn_count = turn_count + ${turns.length}::int,
        prompt_token_count = prompt_token_count + ${sum((turn) => turn.promptTokenCount ?? 0)}::bigint,
        completion_token_count = completion_token_count + ${sum((turn) => turn.completionTokenIds?.length ?? 0)}::bigint,
        latency_ms = latency_ms + ${sum((turn) => turn.latencyMs ?? 0)}::double precision${renewal}
      where id = ${first.trajectoryId}::uuid and status = 'running' and turn_count = ${first.index}::int${heldBy}
      returning ${finish ? sql`*` : sql`id`}
    ), ${chain}, inserted as (
      insert into turns (${insertedTurnColumns})
      select ${updated}.id, ${recordColumns}, chain.digest, ${access.writer}::text
      from ${updated} cross join jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(${turnRecordColumns(false)})
      join chain on chain.position = r.index - ${first.index - 1}::int
    )${finish ? sql`, ${completion.cte}` : sql``}
    ${finish ? sql`select final_step.*, ${completion.column} from final_step` : sql`select count(*)::int as appended from advanced`}`;
  if (finish) {
    try {
      const [row] = rowsOf<Record<string, unknown>>(await executeNamed(db, statement));
      return row ? finishedRow(row) : undefined;
    } catch (error) {
      throw turnExistsError(error, first);
    }
  }
  let appended: number;
  try {
    const [row] = rowsOf<{ appended: number }>(await executeNamed(db, statement));
    appended = Number(row?.appended ?? 0);
  } catch (error) {
    throw turnExistsError(error, first);
  }
  return appended === 1;
}
