// Ingesting whole recorded episodes (an agent run elsewhere, a dataset): each trajectory with all of
// its turns, every episode of the call in one transaction whose work is one statement (the trajectories
// and their turns as two JSON arrays, expanded by jsonb_to_recordset and inserted by chained CTEs), plus
// one lookup when tasks or policy versions are named, two reads only when a key was seen before, and
// two statements when episodes join groups (ingest-groups.ts).
// Idempotent on the uploader's key: a repeated episode is a no-op, a different one under a stored key a
// `conflict`, and then nothing of the call is written.
import { findUnstorable, type Unstorable, unstorableMessages } from '../../protocol/unstorable-json.ts';
import { jsonEqual } from '../../protocol/canonical-json.ts';
import { asc, inArray, sql } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { rowsOf } from '../rows-of.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import { turns as turnsTable } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import {
  type IngestEpisode,
  type IngestTrajectoriesInput,
  ingestTrajectoriesSchema,
  keptEpisodeText,
} from './ingest-episode.ts';
import { countGroups, type IngestedGroup, placeGroups } from './ingest-groups.ts';
import { comparedTrajectoryFields, fieldError, type PlannedEpisode, planEpisodes } from './ingest-rows.ts';
import { parseInput } from './parse-input.ts';
import { turnDifference } from './turn-row.ts';

export interface IngestedTrajectory {
  /** The episode's key, or null when it had none. */
  readonly key: string | null;
  readonly trajectoryId: string;
  /** False when the episode was already stored under its key (or repeated earlier in the call). */
  readonly created: boolean;
  readonly turnCount: number;
}

export interface IngestResult {
  /** One per episode, in the order given. */
  readonly trajectories: IngestedTrajectory[];
  /** Trajectories and turns this call wrote. */
  readonly createdTrajectories: number;
  readonly createdTurns: number;
  /** The groups the call's episodes joined (absent when none named one), as they stand after it. */
  readonly groups?: IngestedGroup[];
}

export async function ingestTrajectories(db: StoreDb, input: IngestTrajectoriesInput): Promise<IngestResult> {
  refuseUnstorable(input);
  // refuseUnstorable checked the text of each field; parseInput checks depth again, and zod.
  const { episodes } = parseInput(ingestTrajectoriesSchema, input, 'ingestTrajectories', {
    keepText: ['episodes'],
  });
  return db.transaction(async (tx) => {
    const taskEnvs = await checkReferences(tx, episodes);
    const newId = () => crypto.randomUUID();
    const unplaced = planEpisodes(episodes, taskEnvs, newId);
    const groupIds = await placeGroups(tx, unplaced, newId);
    const planned = unplaced.map((episode) =>
      episode.group
        ? {
            ...episode,
            trajectory: { ...episode.trajectory, groupId: groupIds.get(episode.group.key) ?? null },
          }
        : episode,
    );
    const fresh = planned.filter((episode) => episode.repeatOf === undefined);
    const inserted = await insertEpisodes(tx, fresh);
    const stored = await storedRepeats(
      tx,
      fresh.filter((episode) => !inserted.has(episode.trajectory.id)),
    );
    const ids = new Map<number, { trajectoryId: string; created: boolean }>();
    for (const episode of fresh) {
      const created = inserted.has(episode.trajectory.id);
      const trajectoryId = created ? episode.trajectory.id : (stored.get(episode.position) as string);
      ids.set(episode.position, { trajectoryId, created });
    }
    const results = planned.map((episode): IngestedTrajectory => {
      const first = ids.get(episode.repeatOf ?? episode.position);
      if (!first) throw new Error(`ingestTrajectories: episode ${episode.position} has no outcome`);
      return {
        key: episode.trajectory.ingestKey,
        trajectoryId: first.trajectoryId,
        created: episode.repeatOf === undefined && first.created,
        turnCount: episode.turns.length,
      };
    });
    const written = fresh.filter((episode) => inserted.has(episode.trajectory.id));
    const groups = await countGroups(tx, groupIds, planned);
    return {
      trajectories: results,
      createdTrajectories: written.length,
      createdTurns: written.reduce((sum, episode) => sum + episode.turns.length, 0),
      ...(groups.length > 0 ? { groups } : {}),
    };
  });
}

/** The episodes' tasks and policy versions exist (one query, only when any is named); each task's env. */
async function checkReferences(
  tx: StoreDb,
  episodes: readonly IngestEpisode[],
): Promise<ReadonlyMap<string, string>> {
  const taskIds = [...new Set(episodes.flatMap((episode) => (episode.taskId ? [episode.taskId] : [])))];
  const versionIds = [
    ...new Set(episodes.flatMap((episode) => (episode.policyVersionId ? [episode.policyVersionId] : []))),
  ];
  if (taskIds.length === 0 && versionIds.length === 0) return new Map();
  const found = rowsOf<{ kind: 'task' | 'version'; id: string; env: string | null }>(
    await tx.execute(sql`
      select 'task' as kind, id, env from tasks where id = any(${pgArray(taskIds)}::uuid[])
      union all
      select 'version' as kind, id, null as env from policy_versions where id = any(${pgArray(versionIds)}::uuid[])`),
  );
  const taskEnvs = new Map(found.flatMap((row) => (row.kind === 'task' ? [[row.id, row.env ?? '']] : [])));
  const versions = new Set(found.flatMap((row) => (row.kind === 'version' ? [row.id] : [])));
  episodes.forEach((episode, position) => {
    const { taskId, policyVersionId } = episode;
    if (taskId && !taskEnvs.has(taskId))
      throw fieldError('not-found', position, 'taskId', `task ${taskId} does not exist`);
    if (policyVersionId && !versions.has(policyVersionId))
      throw fieldError(
        'not-found',
        position,
        'policyVersionId',
        `policy version ${policyVersionId} does not exist`,
      );
    const taskEnv = taskId ? taskEnvs.get(taskId) : undefined;
    if (taskEnv && episode.env && episode.env !== taskEnv)
      throw fieldError(
        'validation',
        position,
        'env',
        `task ${taskId} belongs to env "${taskEnv}", not "${episode.env}"`,
      );
  });
  return taskEnvs;
}

// jsonb_to_recordset turns each JSON array into rows with typed columns (JSON arrays into int[] and
// double precision[]; Postgres manual, "JSON Processing Functions"). Numbers cross as JSON text, which
// float8 reads back to the same double JavaScript wrote (shortest round-trip digits), so logprobs stay exact.
const trajectoryColumns = sql.raw(`id uuid, ingest_key text, env text, task_id uuid, policy_version_id uuid,
  status text, verifier_reward double precision, error_reason text, turn_count integer,
  prompt_token_count integer, completion_token_count integer, latency_ms double precision, tools jsonb,
  text_encoding text, metadata jsonb, group_id uuid, started_at timestamptz, finished_at timestamptz`);
const turnColumns = sql.raw(`trajectory_id uuid, index integer, schema_version integer, role text,
  content text, tool_calls jsonb, tool_call_id text, tool_error text, completion_token_ids integer[],
  completion_logprobs double precision[], prompt_token_count integer, served_by text,
  latency_ms double precision, metadata jsonb, text_encoding text`);
const turnColumnList = sql.raw(`trajectory_id, index, schema_version, role, content, tool_calls,
  tool_call_id, tool_error, completion_token_ids, completion_logprobs, prompt_token_count, served_by,
  latency_ms, metadata, text_encoding`);

/**
 * Inserts the episodes whose key is new, with their turns, in one statement; returns the ids it
 * inserted. An episode whose key is stored already (or is being stored by a concurrent call, which
 * this waits for) is skipped by ON CONFLICT, and its turns with it.
 */
async function insertEpisodes(tx: StoreDb, episodes: readonly PlannedEpisode[]): Promise<Set<string>> {
  if (episodes.length === 0) return new Set();
  const trajectoryJson = JSON.stringify(episodes.map(({ trajectory }) => snakeTrajectory(trajectory)));
  const turnJson = JSON.stringify(episodes.flatMap(({ turnRows }) => turnRows.map(snakeTurn)));
  const rows = rowsOf<{ id: string }>(
    await tx.execute(sql`
      with inserted as (
        insert into trajectories (id, ingest_key, env, task_id, policy_version_id, status,
          verifier_reward, error_reason, turn_count, prompt_token_count, completion_token_count,
          latency_ms, tools, text_encoding, metadata, group_id, started_at, finished_at, writer)
        select id, ingest_key, env, task_id, policy_version_id, status, verifier_reward, error_reason,
          turn_count, prompt_token_count, completion_token_count, latency_ms, tools, text_encoding,
          metadata, group_id, coalesce(started_at, now()), coalesce(finished_at, now()), 'ingest'
        from jsonb_to_recordset(${trajectoryJson}::jsonb) as episode(${trajectoryColumns})
        on conflict (ingest_key) do nothing
        returning id
      ), inserted_turns as (
        insert into turns (${turnColumnList}, writer)
        select ${turnColumnList}, 'ingest'
        from jsonb_to_recordset(${turnJson}::jsonb) as turn(${turnColumns})
        where turn.trajectory_id in (select id from inserted)
      )
      select id from inserted`),
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * For episodes whose key was already stored: the stored trajectory's id, after checking that the stored
 * trajectory and every turn repeat the episode (else `conflict`, naming the first field that differs).
 */
async function storedRepeats(tx: StoreDb, episodes: readonly PlannedEpisode[]): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  if (episodes.length === 0) return found;
  const keys = episodes.map((episode) => episode.trajectory.ingestKey as string);
  const storedRows = await tx.select().from(trajectories).where(inArray(trajectories.ingestKey, keys));
  const byKey = new Map(storedRows.map((row) => [row.ingestKey, row]));
  const storedTurns = await tx
    .select()
    .from(turnsTable)
    .where(
      inArray(
        turnsTable.trajectoryId,
        storedRows.map((row) => row.id),
      ),
    )
    .orderBy(asc(turnsTable.trajectoryId), asc(turnsTable.index));
  for (const episode of episodes) {
    const stored = byKey.get(episode.trajectory.ingestKey);
    if (!stored)
      throw new Error(`ingestTrajectories: key of episode ${episode.position} is neither new nor stored`);
    const difference =
      trajectoryDifference(stored, episode) ??
      turnsDifference(
        storedTurns.filter((turn) => turn.trajectoryId === stored.id),
        episode,
      );
    if (difference) {
      throw fieldError(
        'conflict',
        episode.position,
        'key',
        `trajectory ${stored.id} is already stored under this key with a different ${difference}`,
      );
    }
    found.set(episode.position, stored.id);
  }
  return found;
}

function trajectoryDifference(stored: Trajectory, episode: PlannedEpisode): string | undefined {
  // Both sides in the stored form: the planned row's tools are escaped the same way.
  const field = comparedTrajectoryFields.find((name) => !jsonEqual(stored[name], episode.trajectory[name]));
  if (field) return field === 'groupId' ? 'group' : field;
  // Recorded times are compared when the upload gives them (else the stored ones are the first upload's).
  const { startedAt, finishedAt } = episode.trajectory;
  if (startedAt && stored.startedAt.getTime() !== startedAt.getTime()) return 'startedAt';
  if (finishedAt && stored.finishedAt?.getTime() !== finishedAt.getTime()) return 'finishedAt';
  return undefined;
}

function turnsDifference(
  stored: readonly (typeof turnsTable.$inferSelect)[],
  episode: PlannedEpisode,
): string | undefined {
  for (const turn of episode.turns) {
    const row = stored[turn.index];
    if (!row || row.index !== turn.index) return `turn ${turn.index} (missing)`;
    const field = turnDifference(row, turn);
    if (field) return `turn ${turn.index} ${field}`;
  }
  return stored.length > episode.turns.length ? 'turn count' : undefined;
}

function snakeTrajectory(row: PlannedEpisode['trajectory']) {
  return {
    id: row.id,
    ingest_key: row.ingestKey,
    env: row.env,
    task_id: row.taskId,
    policy_version_id: row.policyVersionId,
    status: row.status,
    verifier_reward: row.verifierReward,
    error_reason: row.errorReason,
    turn_count: row.turnCount,
    prompt_token_count: row.promptTokenCount,
    completion_token_count: row.completionTokenCount,
    latency_ms: row.latencyMs,
    tools: row.tools,
    text_encoding: row.textEncoding,
    metadata: row.metadata,
    group_id: row.groupId,
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

function snakeTurn(row: PlannedEpisode['turnRows'][number]) {
  return {
    trajectory_id: row.trajectoryId,
    index: row.index,
    schema_version: row.schemaVersion,
    role: row.role,
    content: row.content,
    tool_calls: row.toolCalls,
    tool_call_id: row.toolCallId,
    tool_error: row.toolError,
    completion_token_ids: row.completionTokenIds,
    completion_logprobs: row.completionLogprobs,
    prompt_token_count: row.promptTokenCount,
    served_by: row.servedBy,
    latency_ms: row.latencyMs,
    metadata: row.metadata,
    text_encoding: row.textEncoding,
  };
}

/**
 * Before zod: nesting too deep anywhere (zod's recursive schemas would overflow), and text Postgres
 * cannot hold outside the fields the store keeps escaped (turns, tools, the error reason), each named
 * by its path from the call (`episodes.2.metadata.note`).
 */
function refuseUnstorable(input: unknown): void {
  const found = findRefused(input);
  if (!found) return;
  const message = unstorableMessages[found.problem];
  const path = found.path;
  throw new StoreError('validation', `ingestTrajectories: ${path.join('.') || '(root)'}: ${message}`, {
    issues: [{ code: 'custom', path: [...path], message, input: undefined }],
  });
}

function findRefused(input: unknown): Unstorable | undefined {
  const episodes = isRecord(input) ? input.episodes : undefined;
  if (!Array.isArray(episodes)) return findUnstorable(input, { text: false });
  for (const [position, episode] of episodes.entries()) {
    const at = (found: Unstorable | undefined, prefix: readonly (string | number)[]) =>
      found && { problem: found.problem, path: [...prefix, ...topOfTooDeep(found)] };
    if (!isRecord(episode)) continue;
    for (const [key, value] of Object.entries(episode)) {
      if (key === 'turns' && Array.isArray(value)) {
        for (const [index, turn] of value.entries()) {
          const found = at(findUnstorable(turn, { text: false }), ['episodes', position, 'turns', index]);
          if (found) return found;
        }
        continue;
      }
      const kept = (keptEpisodeText as readonly string[]).includes(key);
      const found = at(findUnstorable({ [key]: value }, { text: !kept }), ['episodes', position]);
      if (found) return found;
    }
  }
  return undefined;
}

/** A too-deep value is named by its top field, not by the 64 keys that lead to the limit. */
function topOfTooDeep(found: Unstorable): readonly (string | number)[] {
  return found.problem === 'too-deep' ? found.path.slice(0, 1) : found.path;
}

/** A Postgres array literal of uuids (validated, so nothing to quote): drizzle would spread a JS array into a list. */
function pgArray(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
