// What ingestTrajectories takes: whole episodes recorded elsewhere, each with its outcome and its turns
// in order (a turn's index is its position). Each turn is the turn record of protocol/turn.ts without
// the two fields the store sets (trajectoryId, index), held to the same rules. An episode is live
// traffic, linked to a task and a policy version at most, unless it names a `group`: the uploader's
// key for N samples of one task (GRPO's group), which the episodes naming it join, in one upload or
// several, and which is complete (trainable) once its N-th member is stored. It may carry the times it
// was recorded at.
import { toolSpecListSchema } from '../../protocol/chat.ts';
import { endStatuses, refineEndReason } from '../../protocol/finish.ts';
import { type Turn, type TurnInput, turnInputSchema } from '../../protocol/turn.ts';
import { rewardSchema, sequenceIssues } from '../../protocol/validate-turns.ts';
import { z } from 'zod';
import { metadataSchema } from '../schema/json.ts';
import { maxIngestEpisodes, maxIngestTurns } from '../store-constants.ts';
import { id, int4, name } from './fields.ts';

/** The store sets these from the episode; a turn that names them is refused rather than silently rewritten. */
const storeSetFields = ['trajectoryId', 'index'] as const;
const turnFields = new Set(Object.keys(turnInputSchema.shape));
/** A placeholder for the fields the store sets, so the turn record's own schema checks the rest. */
const placeholder = { trajectoryId: '00000000-0000-4000-8000-000000000000', index: 0 };

export type IngestTurn = Omit<Turn, 'trajectoryId' | 'index'>;

export type IngestTurnInput = Omit<TurnInput, 'trajectoryId' | 'index'>;

/** A recorded time: ISO 8601 with its offset (`2025-01-31T12:00:00Z`), read as a Date. */
const recordedTime = z.iso
  .datetime({ offset: true })
  .transform((text) => new Date(text))
  .refine((date) => !Number.isNaN(date.getTime()), 'not a time');

// Typed for callers as the turn record's input; any value is let through to the transform, which checks it.
const ingestTurnSchema = z
  .custom<IngestTurnInput>(() => true)
  .transform((raw: unknown, ctx): IngestTurn => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      ctx.addIssue({ code: 'custom', message: 'must be a turn object', input: raw });
      return z.NEVER;
    }
    for (const key of Object.keys(raw)) {
      const setByStore = (storeSetFields as readonly string[]).includes(key);
      if (setByStore || !turnFields.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: setByStore ? 'set by the store (a turn is numbered by its position)' : 'unknown field',
          input: raw,
        });
      }
    }
    const parsed = turnInputSchema.safeParse({ ...raw, ...placeholder });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: raw } as never);
      return z.NEVER;
    }
    const { trajectoryId: _trajectoryId, index: _index, ...turn } = parsed.data;
    // The column is int4: a larger count would fail in Postgres without naming the field (token ids
    // are the turn record's own rule, protocol/validate-turns.ts).
    if (turn.promptTokenCount !== undefined && !int4.safeParse(turn.promptTokenCount).success)
      ctx.addIssue({
        code: 'custom',
        path: ['promptTokenCount'],
        message: 'beyond a 32-bit integer',
        input: raw,
      });
    return turn;
  });

/** The group a recorded episode is one sample of. */
export const ingestGroupSchema = z.strictObject({
  /** The uploader's key for the group; every episode of the group names it (and the same size). */
  key: z.string().min(1).max(500),
  /** Samples the group holds when complete (createGroup's bound). */
  size: z.number().int().min(1).max(1024),
});

export const ingestEpisodeSchema = z
  .strictObject({
    /**
     * The uploader's key for the episode: a retry under the same key is a no-op, another episode under
     * it a `conflict`. Absent: every upload stores a new trajectory.
     */
    key: z.string().min(1).max(500).optional(),
    /** The environment; may be left out when `taskId` names it. */
    env: name.optional(),
    taskId: id.optional(),
    /** The policy version that produced the episode, when it is one of the store's. */
    policyVersionId: id.optional(),
    /** How the episode ended; default `finished`. */
    status: z.enum(endStatuses).default('finished'),
    /** The recording's own reward (its environment's check), stored as the verifier reward. */
    verifierReward: rewardSchema.optional(),
    /** Required for `error`; allowed for `truncated`. */
    errorReason: z.string().min(1).max(2000).optional(),
    metadata: metadataSchema.optional(),
    /** The tools the episode was offered, stored for the trainer and the judge to render. */
    tools: toolSpecListSchema.optional(),
    /** The group this episode is one sample of; needs `key` (a retry must not add a member) and `taskId`. */
    group: ingestGroupSchema.optional(),
    /** When the episode was recorded (ISO 8601 with an offset); default the time of the upload. */
    startedAt: recordedTime.optional(),
    finishedAt: recordedTime.optional(),
    turns: z.array(ingestTurnSchema).min(1).max(maxIngestTurns),
  })
  .superRefine(refineEndReason('errorReason'))
  .superRefine((episode, ctx) => {
    if (episode.group && episode.key === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['key'],
        message: 'required with a group: a retried upload must not add a member',
      });
    if (episode.group && episode.taskId === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['taskId'],
        message: 'required with a group: a group holds samples of one task',
      });
    if (episode.startedAt && episode.finishedAt && episode.finishedAt < episode.startedAt)
      ctx.addIssue({ code: 'custom', path: ['finishedAt'], message: 'before startedAt' });
    // The order of the roles: the same rule as the episode loop's and the proxy's (validate-turns.ts).
    for (const issue of sequenceIssues(episode.turns).issues)
      ctx.addIssue({ code: 'custom', path: ['turns', ...issue.path], message: issue.message });
  });
export type IngestEpisodeInput = z.input<typeof ingestEpisodeSchema>;
export type IngestEpisode = z.output<typeof ingestEpisodeSchema>;

export const ingestTrajectoriesSchema = z.strictObject({
  episodes: z.array(ingestEpisodeSchema).min(1).max(maxIngestEpisodes),
});
export type IngestTrajectoriesInput = z.input<typeof ingestTrajectoriesSchema>;

/** The fields of an episode whose text a model or a recorder wrote: kept (escaped) rather than refused. */
export const keptEpisodeText = ['turns', 'tools', 'errorReason'] as const;
