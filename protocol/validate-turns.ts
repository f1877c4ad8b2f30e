// The one set of rules every writer of turns applies (the episode loop's sink, the recording proxy,
// POST /v1/trajectories with turns, `edgerl import`): values the trainer does arithmetic on must be in
// range, and the roles must follow each other as a chat API accepts them. Pure and Worker-safe; it
// names the offending field as a path and leaves the wording of the path (`episodes.0.turns.3`,
// `messages.3`) and the error type to each caller. Documented once in docs/trajectory-format.md.
import { z } from 'zod';

/**
 * Rewards are in [0, 1]: the finish route's bound, the range score-episode.ts holds verifiers to, and
 * what GRPO's group normalisation (advantages, A/B means) is computed over. A reward like 1e308 would
 * make a group's mean and standard deviation overflow to Infinity and its advantages NaN.
 */
export const minReward = 0;
export const maxReward = 1;

export function rewardIssue(reward: number): string | undefined {
  if (!Number.isFinite(reward)) return `must be a finite number in [${minReward}, ${maxReward}]`;
  if (reward < minReward || reward > maxReward)
    return `must be in [${minReward}, ${maxReward}], got ${reward}`;
  return undefined;
}

/** A reward as the API and the store take it (finish, ingest, import). */
export const rewardSchema = numberWith(rewardIssue);

/**
 * A sampled token's logprob is log_softmax(logits)[token]: vLLM computes it in float32
 * (`logits.log_softmax(dim=-1, dtype=torch.float32)`, vllm/v1/sample/sampler.py compute_logprobs)
 * and serve-model in float64 as `logit − (max + log Σ exp(logit − max))` (model/sampler.ts). Both
 * are exactly ≤ 0 under IEEE rounding (the subtracted normaliser is ≥ every logit, and rounding is
 * monotone), so no positive epsilon is allowed. The floor is the one vLLM writes for −∞ in JSON
 * (−9999.0, serve/logprobs-format.ts does the same): below it a value is no logprob a server sends,
 * and one like −1e308 overflows the trainer's importance ratio exp(new − old).
 */
export const maxLogprob = 0;
export const minLogprob = -9999;

export function logprobIssue(logprob: number): string | undefined {
  if (!Number.isFinite(logprob)) return 'must be a finite logprob';
  if (logprob > maxLogprob)
    return `must be ≤ ${maxLogprob} (a logprob is the log of a probability), got ${logprob}`;
  if (logprob < minLogprob) return `must be ≥ ${minLogprob} (vLLM's floor for −∞), got ${logprob}`;
  return undefined;
}

/** A logprob as the API takes it (an import line's `logprobs`). */
export const logprobSchema = numberWith(logprobIssue);

/** Token ids are stored in an int4 array column: an integer in [0, 2^31). */
export const maxTokenId = 2 ** 31 - 1;

export function tokenIdIssue(tokenId: number): string | undefined {
  if (!Number.isInteger(tokenId) || tokenId < 0 || tokenId > maxTokenId)
    return `must be a token id: an integer from 0 to ${maxTokenId}, got ${tokenId}`;
  return undefined;
}

/** A token id as the API takes it (an import line's `token_ids`). */
export const tokenIdSchema = numberWith(tokenIdIssue);

/** A zod number held to one of the rules above, with its message. */
function numberWith(rule: (value: number) => string | undefined) {
  return z.number().superRefine((value, ctx) => {
    const message = rule(value);
    if (message) ctx.addIssue({ code: 'custom', message });
  });
}

export type TurnRole = 'system' | 'user' | 'assistant' | 'tool';

/** The fields of a turn the rules read, in the turn record's names (protocol/turn.ts). */
export interface CheckedTurn {
  readonly role: TurnRole;
  readonly toolCalls?: readonly { readonly id: string }[] | null | undefined;
  readonly toolCallId?: string | null | undefined;
  readonly completionTokenIds?: readonly number[] | null | undefined;
  readonly completionLogprobs?: readonly number[] | null | undefined;
  readonly metadata?: { readonly untokenizedLogprobs?: readonly number[] | undefined } | null | undefined;
}

export interface TurnIssue {
  /** From the turn list: `[5, 'completionLogprobs', 12]` is turn 5's 13th logprob. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The values of one turn; paths are from the turn (`['completionLogprobs', 12]`). First issue of each field. */
export function turnValueIssues(turn: CheckedTurn): TurnIssue[] {
  const issues: TurnIssue[] = [];
  const firstOf = (
    field: string,
    values: readonly number[] | null | undefined,
    rule: (value: number) => string | undefined,
    path: readonly (string | number)[] = [field],
  ) => {
    for (const [index, value] of (values ?? []).entries()) {
      const message = rule(value);
      if (message) {
        issues.push({ path: [...path, index], message });
        return;
      }
    }
  };
  firstOf('completionTokenIds', turn.completionTokenIds, tokenIdIssue);
  firstOf('completionLogprobs', turn.completionLogprobs, logprobIssue);
  firstOf('untokenizedLogprobs', turn.metadata?.untokenizedLogprobs, logprobIssue, [
    'metadata',
    'untokenizedLogprobs',
  ]);
  return issues;
}

/**
 * Where a run of turns stands, for rules that look back: the role of the turn before, and the calls
 * of the assistant turn the next tool turns may answer (those it made and no tool turn answered yet).
 */
export interface TurnSequence {
  readonly previousRole: TurnRole | undefined;
  /** Null when no tool turn may come next (the turn before is neither an assistant with calls nor a tool). */
  readonly openCalls: ReadonlySet<string> | null;
  /** Every call of that assistant turn, answered or not, to say which a stray id might have meant. */
  readonly calls: readonly string[];
}

export const episodeStart: TurnSequence = { previousRole: undefined, openCalls: null, calls: [] };

/**
 * The order rules, as chat APIs (OpenAI's, vLLM's chat templates) take a conversation: a tool turn
 * answers, by `toolCallId`, a call of the nearest assistant turn before it with only tool turns
 * between, and answers it once; two assistant turns never follow each other without a user or tool
 * turn between. System turns may come anywhere (clients send mid-conversation instructions); calls
 * left unanswered are allowed (an episode cut off after a call). Paths are from the list (`[5, 'toolCallId']`).
 */
export function sequenceIssues(
  turns: readonly CheckedTurn[],
  start: TurnSequence = episodeStart,
): { issues: TurnIssue[]; end: TurnSequence } {
  const issues: TurnIssue[] = [];
  let state = start;
  for (const [index, turn] of turns.entries()) {
    const message = orderIssue(turn, state);
    if (message) issues.push({ path: [index, message.field], message: message.text });
    state = nextState(turn, state);
  }
  return { issues, end: state };
}

function orderIssue(turn: CheckedTurn, state: TurnSequence): { field: string; text: string } | undefined {
  if (turn.role === 'assistant' && state.previousRole === 'assistant') {
    return {
      field: 'role',
      text: 'an assistant turn right after another: a user or tool turn must come between them',
    };
  }
  if (turn.role !== 'tool') return undefined;
  const id = turn.toolCallId ?? '';
  if (state.openCalls === null) {
    return {
      field: 'toolCallId',
      text: `a tool result with no call before it: it must follow the assistant turn that made call "${id}"`,
    };
  }
  if (state.openCalls.has(id)) return undefined;
  if (state.calls.includes(id)) return { field: 'toolCallId', text: `answers call "${id}" a second time` };
  return {
    field: 'toolCallId',
    text: `answers no call of the assistant turn before it (its calls: ${state.calls.map((call) => `"${call}"`).join(', ')})`,
  };
}

function nextState(turn: CheckedTurn, state: TurnSequence): TurnSequence {
  switch (turn.role) {
    case 'assistant': {
      const calls = (turn.toolCalls ?? []).map((call) => call.id);
      return { previousRole: 'assistant', openCalls: calls.length > 0 ? new Set(calls) : null, calls };
    }
    case 'tool': {
      if (state.openCalls === null) return { ...state, previousRole: 'tool' };
      const open = new Set(state.openCalls);
      open.delete(turn.toolCallId ?? '');
      return { previousRole: 'tool', openCalls: open, calls: state.calls };
    }
    case 'system':
    case 'user':
      return { previousRole: turn.role, openCalls: null, calls: [] };
    default:
      return assertNever(turn.role);
  }
}

function assertNever(value: never): never {
  throw new Error(`unknown role ${String(value)}`);
}

/** Every rule over a run of turns: each turn's values, then the order. Paths are from the list. */
export function validateTurns(
  turns: readonly CheckedTurn[],
  start: TurnSequence = episodeStart,
): { issues: TurnIssue[]; end: TurnSequence } {
  const values = turns.flatMap((turn, index) =>
    turnValueIssues(turn).map((issue) => ({ path: [index, ...issue.path], message: issue.message })),
  );
  const order = sequenceIssues(turns, start);
  const issues = [...values, ...order.issues].sort((a, b) => (a.path[0] as number) - (b.path[0] as number));
  return { issues, end: order.end };
}
