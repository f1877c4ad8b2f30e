// Parsed episodes as the rows ingestTrajectories writes: a trajectory row with the counters its turns
// add up to (the same sums appendTurn keeps), and its turn rows in the stored text form. Pure: ids
// come from the caller, nothing here reads the database. Also finds an episode repeated within one call.
import { canonicalJson } from '../../protocol/canonical-json.ts';
import { storableMessage } from '../../protocol/stored-text.ts';
import type { Turn } from '../../protocol/turn.ts';
import type { z } from 'zod';
import { StoreError } from '../errors.ts';
import type { trajectories } from '../schema/trajectories.ts';
import type { IngestEpisode } from './ingest-episode.ts';
import { toStoredTools } from './trajectory-row.ts';
import { type NewTurnRow, toTurnRow } from './turn-row.ts';

const int4Max = 2 ** 31 - 1;

export type IngestTrajectoryRow = Required<
  Pick<
    typeof trajectories.$inferInsert,
    | 'id'
    | 'ingestKey'
    | 'env'
    | 'taskId'
    | 'policyVersionId'
    | 'status'
    | 'verifierReward'
    | 'errorReason'
    | 'turnCount'
    | 'promptTokenCount'
    | 'completionTokenCount'
    | 'latencyMs'
    | 'tools'
    | 'textEncoding'
    | 'metadata'
    | 'groupId'
    | 'finishedAt'
  >
> & {
  /** Null: the time of the upload (as finishedAt). */
  startedAt: Date | null;
};

export interface PlannedEpisode {
  /** Position in the call. */
  readonly position: number;
  readonly trajectory: IngestTrajectoryRow;
  readonly turns: readonly Turn[];
  readonly turnRows: readonly NewTurnRow[];
  /** An earlier episode of the same call with the same key and content: this one is its repeat. */
  readonly repeatOf?: number;
  /** The group the episode joins (its row's groupId is set once the group is found or made). */
  readonly group?: { readonly key: string; readonly size: number };
}

/**
 * The rows for each episode. `env` is the episode's, or its task's (`taskEnvs`); `newId` names each
 * new trajectory. Throws `validation` for a missing env or counters beyond int4, `conflict` for two
 * different episodes under one key.
 */
export function planEpisodes(
  episodes: readonly IngestEpisode[],
  taskEnvs: ReadonlyMap<string, string>,
  newId: () => string,
): PlannedEpisode[] {
  const byKey = new Map<string, { position: number; content: string }>();
  const byGroup = new Map<string, { position: number; episode: IngestEpisode }>();
  return episodes.map((episode, position) => {
    if (episode.group) {
      const first = byGroup.get(episode.group.key);
      if (!first) byGroup.set(episode.group.key, { position, episode });
      else {
        // One group is one task's samples under one policy, of one size: its episodes must agree.
        const differs =
          first.episode.group?.size !== episode.group.size
            ? 'group'
            : first.episode.taskId !== episode.taskId
              ? 'taskId'
              : first.episode.policyVersionId !== episode.policyVersionId
                ? 'policyVersionId'
                : undefined;
        if (differs)
          throw fieldError(
            'validation',
            position,
            differs,
            `differs from episodes.${first.position}, which names the same group`,
          );
      }
    }
    let repeatOf: number | undefined;
    if (episode.key !== undefined) {
      const content = canonicalJson(episode);
      const first = byKey.get(episode.key);
      if (first && first.content !== content) {
        throw fieldError(
          'conflict',
          position,
          'key',
          `another episode of this call (episodes.${first.position}) has the same key`,
        );
      }
      if (first) repeatOf = first.position;
      else byKey.set(episode.key, { position, content });
    }
    const env = episode.env ?? (episode.taskId ? taskEnvs.get(episode.taskId) : undefined);
    if (!env) throw fieldError('validation', position, 'env', 'required when no taskId names it');
    const id = newId();
    const turns: Turn[] = episode.turns.map((turn, index) => ({ ...turn, trajectoryId: id, index }));
    const totals = { promptTokenCount: 0, completionTokenCount: 0, latencyMs: 0 };
    for (const turn of turns) {
      totals.promptTokenCount += turn.promptTokenCount ?? 0;
      totals.completionTokenCount += turn.completionTokenIds?.length ?? 0;
      totals.latencyMs += turn.latencyMs ?? 0;
    }
    if (totals.promptTokenCount > int4Max)
      throw fieldError(
        'validation',
        position,
        'turns',
        'their promptTokenCount adds up beyond a 32-bit integer',
      );
    const trajectory: IngestTrajectoryRow = {
      id,
      ingestKey: episode.key ?? null,
      env,
      taskId: episode.taskId ?? null,
      policyVersionId: episode.policyVersionId ?? null,
      status: episode.status,
      verifierReward: episode.verifierReward ?? null,
      // A reason is a message (it may quote the model): shown, like finishTrajectory's, not refused.
      errorReason: episode.errorReason === undefined ? null : storableMessage(episode.errorReason),
      turnCount: turns.length,
      ...totals,
      ...toStoredTools(episode.tools ?? null),
      metadata: episode.metadata ?? {},
      groupId: null,
      startedAt: episode.startedAt ?? null,
      finishedAt: episode.finishedAt ?? null,
    };
    return {
      position,
      trajectory,
      turns,
      turnRows: turns.map(toTurnRow),
      ...(repeatOf !== undefined ? { repeatOf } : {}),
      ...(episode.group ? { group: episode.group } : {}),
    };
  });
}

/**
 * The trajectory fields a retried upload must repeat; the store's own (id, runner) are not compared,
 * and the times only when the upload gives them (ingest-trajectories.ts).
 */
export const comparedTrajectoryFields = [
  'env',
  'taskId',
  'policyVersionId',
  'status',
  'verifierReward',
  'errorReason',
  'turnCount',
  'tools',
  'textEncoding',
  'metadata',
  'groupId',
] as const satisfies readonly (keyof IngestTrajectoryRow)[];

export function fieldError(
  code: 'validation' | 'conflict' | 'not-found',
  position: number,
  field: string,
  message: string,
): StoreError {
  const path = ['episodes', position, field];
  const issue: z.core.$ZodIssue = { code: 'custom', path, message, input: undefined };
  return new StoreError(code, `ingestTrajectories: ${path.join('.')}: ${message}`, { issues: [issue] });
}
