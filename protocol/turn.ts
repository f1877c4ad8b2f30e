// The turn record: what the edge (or the recording proxy) writes for each message of an episode,
// and what the trainer reads back. Versioned: every stored record keeps the version it was written
// with, and readers accept every past version.
import { z } from 'zod';
import { toolCallSchema } from './chat.ts';
import { toolErrorCodes } from './tool-error-code.ts';
import { turnMetadataSchema } from './turn-metadata.ts';
import { TURN_SCHEMA_VERSION } from './turn-version.ts';
import { turnValueIssues } from './validate-turns.ts';

const tokenIds = z.array(z.number().int().nonnegative());

export const turnInputSchema = z
  .object({
    schemaVersion: z.literal(TURN_SCHEMA_VERSION).default(TURN_SCHEMA_VERSION),
    trajectoryId: z.uuid(),
    /** Position of the message in the episode, from 0 (the system prompt, when there is one). */
    index: z.number().int().nonnegative(),
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string().nullable(),
    toolCalls: z.array(toolCallSchema).optional(),
    toolCallId: z.string().min(1).optional(),
    /** For tool turns whose tool failed: why, one of protocol/tool-error-code.ts. */
    toolError: z.enum(toolErrorCodes).optional(),
    /** Assistant turns: the exact sampled completion token ids, as the inference server returned them. */
    completionTokenIds: tokenIds.optional(),
    /** Assistant turns: the sampling logprob of each completion token (same length as the ids). */
    completionLogprobs: z.array(z.number()).optional(),
    promptTokenCount: z.number().int().nonnegative().optional(),
    /** The model or adapter name that answered (e.g. `agent@7`). */
    servedBy: z.string().min(1).optional(),
    latencyMs: z.number().nonnegative().optional(),
    metadata: turnMetadataSchema.optional(),
  })
  .superRefine((turn, ctx) => {
    const ids = turn.completionTokenIds;
    const logprobs = turn.completionLogprobs;
    if (logprobs && (!ids || ids.length !== logprobs.length)) {
      ctx.addIssue({
        code: 'custom',
        path: ['completionLogprobs'],
        message: `must have one logprob per completion token id (${ids?.length ?? 0} ids, ${logprobs.length} logprobs)`,
      });
    }
    if ((ids || logprobs) && turn.role !== 'assistant') {
      ctx.addIssue({
        code: 'custom',
        path: ['role'],
        message: 'only assistant turns carry completion tokens',
      });
    }
    if (turn.role === 'tool' && !turn.toolCallId) {
      ctx.addIssue({
        code: 'custom',
        path: ['toolCallId'],
        message: 'a tool turn needs the id of the call it answers',
      });
    }
    if (turn.toolCalls && turn.role !== 'assistant') {
      ctx.addIssue({ code: 'custom', path: ['toolCalls'], message: 'only assistant turns carry tool calls' });
    }
    // Token ids in int4, logprobs in [−9999, 0]: every writer's one rule (validate-turns.ts).
    for (const issue of turnValueIssues(turn)) {
      ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
    }
  });
export type TurnInput = z.input<typeof turnInputSchema>;
export type Turn = z.output<typeof turnInputSchema>;
