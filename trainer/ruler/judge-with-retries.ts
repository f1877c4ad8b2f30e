// One judging of one ordering, with bounded retries: a malformed or incomplete answer is asked again
// at once (with the problem named, so a deterministic judge does not repeat itself); timeouts, network
// errors, 408, 429 and 5xx are retried after an exponential backoff; other 4xx are final. Returns the
// scores per label, or the last failure with its code.
import type { ChatMessage } from '../../protocol/chat.ts';
import type { JudgePrompt } from './build-judge-prompt.ts';
import type { JudgeCallFailureKind, JudgeClient } from './judge-client.ts';
import { type JudgeAnswerIssueCode, type LabelScore, parseJudgeAnswer } from './parse-judge-answer.ts';
import { addUsage, emptyUsage, type UsageTally } from './usage-tally.ts';

export type JudgeFailureCode = JudgeAnswerIssueCode | JudgeCallFailureKind;

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
}

export type JudgeWithRetriesResult =
  | {
      readonly ok: true;
      readonly scores: ReadonlyMap<string, LabelScore>;
      readonly attempts: number;
      readonly usage: UsageTally;
    }
  | {
      readonly ok: false;
      readonly code: JudgeFailureCode;
      readonly message: string;
      readonly attempts: number;
      readonly usage: UsageTally;
      /** One line per failed attempt, oldest first. */
      readonly history: readonly string[];
    };

export interface JudgeWithRetriesInput {
  readonly client: JudgeClient;
  readonly prompt: JudgePrompt;
  readonly policy: RetryPolicy;
  readonly sleep: (ms: number) => Promise<void>;
  readonly signal?: AbortSignal;
}

/** The longest rejected answer quoted back to the judge, in characters. */
const REPAIR_QUOTE_LIMIT = 4000;

export async function judgeWithRetries(input: JudgeWithRetriesInput): Promise<JudgeWithRetriesResult> {
  const { client, prompt, policy, sleep, signal } = input;
  const maxAttempts = policy.maxRetries + 1;
  let usage = emptyUsage;
  let messages: readonly ChatMessage[] = prompt.messages;
  const history: string[] = [];
  let last: { code: JudgeFailureCode; message: string } = { code: 'network', message: 'no attempt made' };

  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const outcome = await client.complete(messages, prompt.labels, signal);
    if (outcome.kind === 'answer') {
      usage = addUsage(usage, outcome.usage);
      const parsed = parseJudgeAnswer(outcome.content, prompt.labels);
      if (parsed.ok) return { ok: true, scores: parsed.scores, attempts: attempt, usage };
      const truncated =
        outcome.finishReason === 'length' ? ' (the answer was cut off at the token limit)' : '';
      last = { code: parsed.code, message: `${parsed.message}${truncated}` };
      history.push(`attempt ${attempt}: ${last.code}: ${last.message}`);
      messages = [...prompt.messages, ...repairMessages(outcome.content, last.message, prompt.labels)];
      continue;
    }
    const failure = outcome.failure;
    if (failure.kind === 'timeout' || failure.usage) usage = addUsage(usage, failure.usage);
    last = { code: failure.kind, message: failure.message };
    history.push(`attempt ${attempt}: ${last.code}: ${last.message}`);
    if (!failure.retryable) return { ok: false, ...last, attempts: attempt, usage, history };
    if (attempt < maxAttempts) await sleep(backoffMs(attempt, policy, failure.retryAfterMs));
  }
  return { ok: false, ...last, attempts: maxAttempts, usage, history };
}

/**
 * Delay before retry number `retry` (1-based): base·2^(retry−1), at least what Retry-After asked for,
 * at most backoffMaxMs (which bounds how long a training step waits). No jitter, so runs and logs are
 * reproducible; add it if many trainers ever share one judge endpoint.
 */
export function backoffMs(retry: number, policy: RetryPolicy, retryAfterMs?: number): number {
  const exponential = policy.backoffBaseMs * 2 ** (retry - 1);
  return Math.min(policy.backoffMaxMs, Math.max(exponential, retryAfterMs ?? 0));
}

function repairMessages(answer: string, problem: string, labels: readonly string[]): ChatMessage[] {
  const quoted = answer.length > REPAIR_QUOTE_LIMIT ? `${answer.slice(0, REPAIR_QUOTE_LIMIT)}…` : answer;
  return [
    { role: 'assistant', content: quoted },
    {
      role: 'user',
      content: `That answer cannot be used: ${problem}. Reply again with only the JSON object {"scores": [...]}, one entry with a score from 0 to 1 for each of these ids: ${labels.join(', ')}.`,
    },
  ];
}
