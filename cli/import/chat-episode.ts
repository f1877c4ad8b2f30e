// One line of an OpenAI chat-format JSONL file as a recorded episode for the store: `messages` become
// turns in order (an assistant message's optional `token_ids` and `logprobs` its sampled tokens),
// `tools` the offered tools, `reward` the verifier reward, `metadata` the trajectory's, `task_id` and
// `group` ({key, size}: the GRPO group the line is one sample of, whose lines may be anywhere in the
// file or in several files), `started_at` / `finished_at` when it was recorded. Pure; unknown
// fields are refused by name rather than dropped (move them into `metadata` to keep them).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../protocol/canonical-json.ts';
import { toolCallSchema, toolSpecListSchema } from '../../protocol/chat.ts';
import type { AssistantTurnMetadata } from '../../protocol/turn-metadata.ts';
import { logprobSchema, rewardSchema, tokenIdSchema } from '../../protocol/validate-turns.ts';
import type { IngestEpisodeInput } from '../../db/store.ts';

const assistantMessage = z.strictObject({
  role: z.literal('assistant'),
  content: z.string().nullable().optional(),
  tool_calls: z.array(toolCallSchema).optional(),
  /** The sampled completion token ids, when the recorder kept them. */
  token_ids: z.array(tokenIdSchema).optional(),
  /** The sampling logprob of each token (one per id; without ids they are kept, not token-exact). */
  logprobs: z.array(logprobSchema).optional(),
});

const chatLineMessage = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content: z.string() }),
  z.strictObject({ role: z.literal('user'), content: z.string() }),
  assistantMessage,
  z.strictObject({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string().min(1) }),
]);

export const chatLineSchema = z.strictObject({
  messages: z.array(chatLineMessage).min(1),
  tools: toolSpecListSchema.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** In [0, 1], the finish route's range (protocol/validate-turns.ts). */
  reward: rewardSchema.optional(),
  /** The episode's idempotency key; absent: a digest of the line's content. */
  key: z.string().min(1).max(500).optional(),
  /** The store's task the episode ran (a group needs one). */
  task_id: z.uuid().optional(),
  /** The group the episode is one sample of (ingestTrajectories' `group`). */
  group: z.strictObject({ key: z.string(), size: z.number() }).optional(),
  /** When it was recorded: ISO 8601 with an offset. */
  started_at: z.string().optional(),
  finished_at: z.string().optional(),
});
export type ChatLine = z.infer<typeof chatLineSchema>;

/** Where a line's refusal points: the field in the line's own names (`messages.3.logprobs`). */
export interface LineProblem {
  readonly field: string;
  readonly message: string;
}

export interface ChatEpisodeOptions {
  readonly env: string;
  readonly policyVersionId?: string;
}

export function chatLineToEpisode(line: ChatLine, options: ChatEpisodeOptions): IngestEpisodeInput {
  return {
    key: line.key ?? contentKey(line),
    env: options.env,
    ...(options.policyVersionId ? { policyVersionId: options.policyVersionId } : {}),
    ...(line.reward !== undefined ? { verifierReward: line.reward } : {}),
    ...(line.metadata ? { metadata: line.metadata } : {}),
    ...(line.tools ? { tools: line.tools } : {}),
    ...(line.task_id ? { taskId: line.task_id } : {}),
    ...(line.group ? { group: line.group } : {}),
    ...(line.started_at !== undefined ? { startedAt: line.started_at } : {}),
    ...(line.finished_at !== undefined ? { finishedAt: line.finished_at } : {}),
    turns: line.messages.map((message) => {
      switch (message.role) {
        case 'assistant':
          return assistantTurn(message);
        case 'tool':
          return { role: 'tool', content: message.content, toolCallId: message.tool_call_id };
        default:
          return { role: message.role, content: message.content };
      }
    }),
  };
}

function assistantTurn(message: z.infer<typeof assistantMessage>) {
  const ids = message.token_ids;
  const metadata: AssistantTurnMetadata = {
    recordedBy: 'import',
    tokenExact: ids !== undefined,
    // Logprobs without ids cannot be matched to tokens: kept as the proxy keeps OpenAI's.
    ...(message.logprobs && !ids ? { untokenizedLogprobs: message.logprobs } : {}),
  };
  return {
    role: 'assistant' as const,
    content: message.content ?? null,
    ...(message.tool_calls ? { toolCalls: message.tool_calls } : {}),
    ...(ids ? { completionTokenIds: ids } : {}),
    ...(ids && message.logprobs ? { completionLogprobs: message.logprobs } : {}),
    metadata,
  };
}

/** The same line content (whatever its key order or spacing) gives the same key, so a rerun is a no-op. */
function contentKey(line: ChatLine): string {
  return `sha256:${createHash('sha256').update(canonicalJson(line)).digest('hex')}`;
}

/** The store's name of an episode field, in the line's own names. */
const lineNames: Readonly<Record<string, string>> = {
  turns: 'messages',
  toolCalls: 'tool_calls',
  toolCallId: 'tool_call_id',
  completionTokenIds: 'token_ids',
  completionLogprobs: 'logprobs',
  verifierReward: 'reward',
  taskId: 'task_id',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
};

/** A store issue path (`episodes.0.turns.3.completionLogprobs`) in the line's names (`messages.3.logprobs`). */
export function lineField(storePath: readonly PropertyKey[]): string {
  const inEpisode = storePath[0] === 'episodes' ? storePath.slice(2) : storePath;
  const names = inEpisode.map((part) =>
    typeof part === 'string' ? (lineNames[part] ?? part) : String(part),
  );
  return names.length > 0 ? names.join('.') : '(line)';
}
