// One judging of one ordering, with bounded retries (protocol/openai/with-retries.ts): a malformed or
// incomplete answer is asked again at once (with the problem named, so a deterministic judge does not
// repeat itself); timeouts, network errors and the shared retryable statuses are retried after an
// exponential backoff; other 4xx are final. Returns the scores per label, or the last failure with its code.
import type { ChatMessage } from '../../protocol/chat.ts';
import type { RetryPolicy } from '../../protocol/openai/retry-policy.ts';
import { withRetries } from '../../protocol/openai/with-retries.ts';
import type { JudgePrompt } from './build-judge-prompt.ts';
import type { JudgeCallFailureKind, JudgeClient } from './judge-client.ts';
import { type JudgeAnswerIssueCode, type LabelScore, parseJudgeAnswer } from './parse-judge-answer.ts';
import type { RulerConfig } from './ruler-config.ts';
import { addUsage, emptyUsage, type UsageTally } from './usage-tally.ts';

export type JudgeFailureCode = JudgeAnswerIssueCode | JudgeCallFailureKind;

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

/**
 * The judge's retry settings as the shared policy: `maxRetries` after the first attempt, base·2^(n−1)
 * capped at backoffMaxMs (which bounds how long a training step waits), at least what Retry-After
 * asked. No jitter, so runs and logs are reproducible; add it if many trainers ever share one endpoint.
 */
export function judgeRetryPolicy(
  config: Pick<RulerConfig, 'maxRetries' | 'backoffBaseMs' | 'backoffMaxMs'>,
): RetryPolicy {
  return {
    maxAttempts: config.maxRetries + 1,
    baseDelayMs: config.backoffBaseMs,
    maxDelayMs: config.backoffMaxMs,
    jitter: 'none',
  };
}

/** The longest rejected answer quoted back to the judge, in characters. */
const REPAIR_QUOTE_LIMIT = 4000;

/** One failed attempt, thrown to the retry loop; never leaves this file. */
class AttemptFailure extends Error {
  constructor(
    readonly code: JudgeFailureCode,
    message: string,
    readonly retryable: boolean,
    /** A bad answer: asked again at once, since a busy server is not the problem. */
    readonly atOnce: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export async function judgeWithRetries(input: JudgeWithRetriesInput): Promise<JudgeWithRetriesResult> {
  const { client, prompt, policy, sleep, signal } = input;
  let usage = emptyUsage;
  let messages: readonly ChatMessage[] = prompt.messages;
  const history: string[] = [];

  const result = await withRetries(
    async (attempt) => {
      const outcome = await client.complete(messages, prompt.labels, signal);
      if (outcome.kind === 'answer') {
        usage = addUsage(usage, outcome.usage);
        const parsed = parseJudgeAnswer(outcome.content, prompt.labels);
        if (parsed.ok) return parsed.scores;
        const truncated =
          outcome.finishReason === 'length' ? ' (the answer was cut off at the token limit)' : '';
        const message = `${parsed.message}${truncated}`;
        history.push(`attempt ${attempt}: ${parsed.code}: ${message}`);
        messages = [
          ...prompt.messages,
          ...repairMessages(outcome.content, `${parsed.code}: ${message}`, prompt.labels),
        ];
        throw new AttemptFailure(parsed.code, message, true, true);
      }
      const failure = outcome.failure;
      if (failure.kind === 'timeout' || failure.usage) usage = addUsage(usage, failure.usage);
      history.push(`attempt ${attempt}: ${failure.kind}: ${failure.message}`);
      throw new AttemptFailure(failure.kind, failure.message, failure.retryable, false, failure.retryAfterMs);
    },
    {
      policy,
      deps: { sleep },
      isRetryable: (error) => error instanceof AttemptFailure && error.retryable,
      retriesAtOnce: (error) => error instanceof AttemptFailure && error.atOnce,
      signal,
    },
  );
  if (result.ok) return { ok: true, scores: result.value, attempts: result.attempts, usage };
  // Anything else is a bug in the client, not a judging failure: let it surface.
  if (!(result.error instanceof AttemptFailure)) throw result.error;
  const { code, message } = result.error;
  return { ok: false, code, message, attempts: result.attempts, usage, history };
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
