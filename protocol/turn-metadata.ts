// The JSON `metadata` of a turn record: the keys the episode loop and the recording proxy write, typed
// so that the edge and the trainer read them back without casts, and the reader that checks a stored
// record's version first. Keys a caller of the store adds itself are kept, untyped.
import { z } from 'zod';
import { formatIssues } from './format-issues.ts';
import { finishReasons } from './finish-reason.ts';
import { checkTurnVersion } from './turn-version.ts';

/** Who wrote an assistant turn: the edge's episode loop, the recording proxy, or an ingested recording (`edgerl import`). */
export const turnRecorders = ['episode', 'proxy', 'import'] as const;
export type TurnRecorder = (typeof turnRecorders)[number];

const assistantShape = {
  /** Why generation stopped (absent on a proxy turn the client sent: nobody sampled it here). */
  finishReason: z.enum(finishReasons).optional(),
  /** True when the endpoint returned the sampled token ids, so the trainer can use them as they are. */
  tokenExact: z.boolean().optional(),
  temperature: z.number().optional(),
  /** The completion token limit asked for; null when a proxy client set none. */
  maxTokens: z.number().int().nullable().optional(),
  /** Policy calls the turn took (1 when the first succeeded). */
  attempts: z.number().int().positive().optional(),
  /** Logprobs an endpoint returned without token ids (OpenAI): kept, but not token-exact. */
  untokenizedLogprobs: z.array(z.number()).optional(),
  /** The inference replica that answered (a fleet's base URL), when the edge routes over a fleet. */
  replica: z.string().min(1).optional(),
  /** Absent on turns written before the episode loop wrote it: those are the episode's. */
  recordedBy: z.enum(turnRecorders).optional(),
  /** Proxy: the reply was streamed to the client. */
  streamed: z.literal(true).optional(),
  /** Proxy: an assistant message the client sent in its request, not a reply sampled through the proxy. */
  fromClient: z.literal(true).optional(),
};

const toolShape = {
  /** The tool the call named (the model's text: it may name a tool that does not exist). */
  toolName: z.string().min(1).optional(),
};

/** What a writer of an assistant turn may put in its metadata (exact keys: a typo does not compile). */
export const assistantTurnMetadataSchema = z.object(assistantShape);
export type AssistantTurnMetadata = z.infer<typeof assistantTurnMetadataSchema>;

/** What a writer of a tool turn may put in its metadata. */
export const toolTurnMetadataSchema = z.object(toolShape);
export type ToolTurnMetadata = z.infer<typeof toolTurnMetadataSchema>;

/** A stored turn's metadata, any role: the known keys typed, other keys kept as they are. */
export const turnMetadataSchema = z.looseObject({ ...assistantShape, ...toolShape });
export type TurnMetadata = z.infer<typeof turnMetadataSchema>;

/** A stored record's metadata does not fit its version's schema. */
export class TurnMetadataError extends Error {
  override readonly name = 'TurnMetadataError';
  readonly code = 'invalid-turn-metadata';
}

/**
 * A stored turn's metadata, read: its version checked (TurnVersionError for a version this code does
 * not read), then the metadata parsed (TurnMetadataError). Version 1 is the only one so far.
 */
export function readTurnMetadata(record: {
  readonly schemaVersion: unknown;
  readonly metadata?: unknown;
}): TurnMetadata {
  checkTurnVersion(record.schemaVersion);
  const parsed = turnMetadataSchema.safeParse(record.metadata ?? {});
  if (!parsed.success) throw new TurnMetadataError(`turn metadata: ${formatIssues(parsed.error)}`);
  return parsed.data;
}
