// The episode loop: ask the policy, run the tools it calls, feed the results back, until an answer
// or the turn limit; write every step as soon as it is complete (the last one with the finish, in one
// write); finish with the verifier's reward.
// A small state machine over TurnOutcome. No HTTP framework or database here: the policy client and
// the trajectory sink are injected, so it runs alike in workerd, in Node and in tests.
import type { AssistantMessage, ChatMessage, ToolCall } from '../../protocol/chat.ts';
import type { TurnInput } from '../../protocol/turn.ts';
import type { ToolTurnMetadata } from '../../protocol/turn-metadata.ts';
import { type Capabilities, missingCapabilities } from '../environments/capabilities.ts';
import type { Environment, EnvironmentTask } from '../environments/environment.ts';
import type { PolicyClient } from '../policy/policy-client.ts';
import { askPolicy } from './ask-policy.ts';
import { assistantTurn, withToolCallIds } from './assistant-turn.ts';
import { type EpisodeSettings, resolveEpisodeSettings } from './episode-defaults.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { EpisodeEvent } from './episode-events.ts';
import { type ResumeFrom, resumePoint } from './resume-point.ts';
import { EpisodeSetupError } from './episode-setup-error.ts';
import { executeToolCall, type ToolExecution, toolFailure } from './execute-tool-call.ts';
import { callLimitMessage, isPastCallLimit, limitToolCalls } from './limit-tool-calls.ts';
import { replyIssue } from './reply-issue.ts';
import { scoreEpisode } from './score-episode.ts';
import { defaultStopRules, firstStop, type StopRule } from './stop-rules.ts';
import type { EndStatus } from '../../protocol/finish.ts';
import type { TrajectoryEnd, TrajectorySink } from './trajectory-sink.ts';
import type { EndOutcome, TurnOutcome } from './turn-outcome.ts';
import { realSleep } from '../../protocol/openai/real-sleep.ts';
import { type RetryDeps, withRetries } from '../../protocol/openai/with-retries.ts';

export interface EpisodeDeps extends RetryDeps {
  /** The jitter draw, in [0, 1). */
  random(): number;
  /** Milliseconds, for tool latencies. */
  now(): number;
}

export interface RunEpisodeOptions<TTask extends EnvironmentTask> {
  readonly environment: Environment<TTask>;
  /** Typed already: whoever read it from outside checked it against `environment.taskSchema`. */
  readonly task: TTask;
  readonly policy: PolicyClient;
  readonly sink: TrajectorySink;
  /** The model or adapter name to ask the policy endpoint for. */
  readonly model: string;
  readonly settings?: Partial<EpisodeSettings>;
  readonly capabilities?: Capabilities;
  readonly stopRules?: readonly StopRule[];
  /**
   * The trajectory's stored messages, when a re-delivered episode continues where an earlier run
   * stopped: the loop answers the last turn's unanswered tool calls and goes on from there.
   */
  readonly resume?: ResumeFrom;
  /** Cancels the episode: it ends with status `error`, reason `cancelled`. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: EpisodeEvent) => void;
  /** Timers and randomness; tests replace them so nothing sleeps for real. */
  readonly deps?: Partial<EpisodeDeps>;
}

export interface EpisodeResult {
  readonly trajectoryId: string;
  readonly status: EndStatus;
  readonly reward?: number;
  readonly detail?: string;
  readonly errorReason?: string;
  /** Turns written to the sink. */
  readonly turns: number;
  readonly messages: readonly ChatMessage[];
}

interface Episode<TTask extends EnvironmentTask> {
  readonly options: RunEpisodeOptions<TTask>;
  readonly settings: EpisodeSettings;
  readonly deps: EpisodeDeps;
  readonly capabilities: Capabilities;
  readonly stopRules: readonly StopRule[];
  readonly messages: ChatMessage[];
  assistantTurns: number;
  /** Tool time spent so far, in ms (the `toolBudgetMs` bound; a resumed run starts from its stored turns'). */
  toolMs: number;
  /** The last step, in `messages` but not yet written: it is written with the finish (end). */
  lastStep: TurnInput[] | undefined;
}

const realDeps: EpisodeDeps = { sleep: realSleep, random: Math.random, now: () => performance.now() };

/** Throws EpisodeSetupError when the episode cannot start; otherwise never throws. */
export async function runEpisode<TTask extends EnvironmentTask>(
  options: RunEpisodeOptions<TTask>,
): Promise<EpisodeResult> {
  const episode = prepare(options);
  const { environment, task, sink } = options;
  emit(episode, {
    type: 'episode-start',
    trajectoryId: sink.trajectoryId,
    environment: environment.name,
    taskId: task.id,
  });
  const outcome = await play(episode);
  return end(episode, outcome);
}

function prepare<TTask extends EnvironmentTask>(options: RunEpisodeOptions<TTask>): Episode<TTask> {
  const { environment } = options;
  const capabilities = options.capabilities ?? {};
  const missing = missingCapabilities(environment.requires, capabilities);
  if (missing.length > 0) {
    throw new EpisodeSetupError(
      'missing-capability',
      `environment ${environment.name} needs capabilities.${missing.join(', capabilities.')}`,
    );
  }
  const settings = resolveEpisodeSettings(options.settings);
  if (!options.model) throw new EpisodeSetupError('invalid-options', 'model must be a non-empty name');
  return {
    options,
    settings,
    deps: { ...realDeps, ...options.deps },
    capabilities,
    stopRules: options.stopRules ?? defaultStopRules,
    messages: [],
    assistantTurns: 0,
    toolMs: 0,
    lastStep: undefined,
  };
}

/** Runs turns until one ends the episode. */
async function play<TTask extends EnvironmentTask>(episode: Episode<TTask>): Promise<EndOutcome> {
  const { environment, task, resume } = episode.options;
  const opening: ChatMessage[] = [
    ...(environment.systemPrompt ? [{ role: 'system' as const, content: environment.systemPrompt }] : []),
    { role: 'user', content: task.prompt },
  ];
  if (resume && resume.messages.length > opening.length) {
    const resumed = await resumeAfter(episode, opening, resume);
    if (resumed.kind !== 'continue') return resumed;
  } else {
    // Fresh, or resumed inside the opening: rewriting a stored opening turn is an idempotent no-op.
    const written = await record(
      episode,
      opening.map((message) => ({ message, extra: {} })),
    );
    if (written) return written;
  }
  for (;;) {
    const outcome = await takeTurn(episode);
    if (outcome.kind !== 'continue') return outcome;
  }
}

/** One assistant turn and the tool turns answering it. */
async function takeTurn<TTask extends EnvironmentTask>(episode: Episode<TTask>): Promise<TurnOutcome> {
  const { options, settings } = episode;
  if (options.signal?.aborted) return { kind: 'error', reason: 'cancelled' };
  const asked = await askPolicy({
    policy: options.policy,
    messages: episode.messages,
    tools: options.environment.tools.map((tool) => tool.spec),
    toolChoice: options.environment.toolChoice,
    strictTools: options.environment.strictTools,
    model: options.model,
    settings,
    turn: episode.assistantTurns,
    deps: episode.deps,
    signal: options.signal,
    onRetry: (retry, delayMs, error) =>
      emit(episode, {
        type: 'policy-retry',
        trajectoryId: options.sink.trajectoryId,
        retry,
        delayMs,
        message: errorMessage(error),
      }),
  });
  if (!asked.ok) return { kind: 'error', reason: asked.reason };
  // Checked before anything is stored: a reply too large to keep or a token id the store cannot hold
  // ends the episode here, with the reason, instead of failing its write (reply-issue.ts).
  const refused = replyIssue(asked.response, settings);
  if (refused) return { kind: 'error', reason: `policy: ${refused}` };
  episode.assistantTurns += 1;
  const index = episode.messages.length;
  const { message } = limitToolCalls(
    withToolCallIds(asked.response.message, index),
    settings.maxToolCallsPerTurn,
  );
  const turn = assistantTurn(asked.response, message, {
    trajectoryId: options.sink.trajectoryId,
    index,
    sampling: settings,
    attempts: asked.attempts,
    recordedBy: 'episode',
  });
  // Whether this step ends the episode depends on the turn alone, not on its tool results.
  const stop = firstStop(episode.stopRules, {
    assistantTurns: episode.assistantTurns,
    maxTurns: options.environment.maxTurns,
    response: asked.response,
  });
  // The step (this turn and its tool results) is written at once, when its tools are done: one
  // round trip, or none of its own when it is the last (written with the finish). An edge that dies
  // mid-step loses only the unwritten step, which a resume asks again.
  const toolFailed = await runToolCalls(
    episode,
    message,
    asked.response.message.tool_calls?.length ?? 0,
    message.tool_calls ?? [],
    [{ message, extra: turn }],
    stop.kind !== 'continue',
  );
  if (toolFailed) return toolFailed;
  return stop;
}

/**
 * Takes the stored messages as the episode so far, answers the last assistant turn's unanswered tool
 * calls, and applies the stop rules to that turn as if it had just ended.
 */
async function resumeAfter<TTask extends EnvironmentTask>(
  episode: Episode<TTask>,
  opening: readonly ChatMessage[],
  resume: ResumeFrom,
): Promise<TurnOutcome> {
  const stored = resume.messages;
  const mismatch = opening.findIndex(
    (message, index) => stored[index]?.role !== message.role || stored[index]?.content !== message.content,
  );
  if (mismatch >= 0) {
    return { kind: 'error', reason: `resume: stored turn ${mismatch} is not this task's opening message` };
  }
  episode.messages.push(...stored);
  episode.toolMs = resume.toolMs ?? 0;
  const point = resumePoint(stored);
  episode.assistantTurns = point.assistantTurns;
  if (!point.lastAssistant) return { kind: 'continue' };
  const lastAssistant = point.lastAssistant;
  const toolFailed = await runToolCalls(
    episode,
    lastAssistant,
    lastAssistant.tool_calls?.length ?? 0,
    point.pendingCalls,
  );
  if (toolFailed) return toolFailed;
  return firstStop(episode.stopRules, {
    assistantTurns: episode.assistantTurns,
    maxTurns: episode.options.environment.maxTurns,
    response: {
      message: point.lastAssistant,
      finishReason: resume.lastFinishReason ?? 'unknown',
      servedBy: episode.options.model,
      latencyMs: 0,
    },
  });
}

/**
 * Runs the calls in order and writes their tool turns after `leading` (the assistant turn that made
 * them, when it is not stored yet) in one append, or keeps them for the finish when `last`. A
 * cancelled step still writes what it has. `owner` is the assistant message (as stored) that made the
 * calls and `made` how many calls its reply had: a call past maxToolCallsPerTurn gets the one refusal
 * (limit-tool-calls.ts), and once the episode's tool time is spent every call gets a `tool-budget`
 * refusal; a call that runs may take at most the time left.
 */
async function runToolCalls<TTask extends EnvironmentTask>(
  episode: Episode<TTask>,
  owner: AssistantMessage,
  made: number,
  calls: readonly ToolCall[],
  leading: readonly StepEntry[] = [],
  last = false,
): Promise<EndOutcome | undefined> {
  const { options, deps, settings } = episode;
  const step: StepEntry[] = [...leading];
  const base = episode.messages.length;
  const maxCalls = settings.maxToolCallsPerTurn;
  for (const call of calls) {
    const started = deps.now();
    const budgetLeftMs = settings.toolBudgetMs - episode.toolMs;
    let execution: ToolExecution;
    if (isPastCallLimit(owner, call, maxCalls)) {
      execution = toolFailure('call-limit', callLimitMessage(Math.max(1, made - maxCalls), maxCalls));
    } else if (budgetLeftMs <= 0) {
      execution = toolFailure(
        'tool-budget',
        `not run: this episode has spent its tool time (${settings.toolBudgetMs} ms); answer with what you have`,
      );
    } else {
      execution = await executeToolCall(call, {
        tools: options.environment.tools,
        task: options.task,
        capabilities: episode.capabilities,
        defaultTimeoutMs: options.environment.toolTimeoutMs,
        maxTimeoutMs: budgetLeftMs,
        signal: options.signal,
      });
      episode.toolMs += Math.max(0, deps.now() - started);
    }
    if (options.signal?.aborted)
      return (await record(episode, step)) ?? { kind: 'error', reason: 'cancelled' };
    const index = base + step.length;
    if (execution.error) {
      emit(episode, {
        type: 'tool-error',
        trajectoryId: options.sink.trajectoryId,
        index,
        toolName: call.function.name,
        code: execution.error.code,
        message: execution.error.message,
      });
    }
    const metadata: ToolTurnMetadata = { toolName: call.function.name };
    step.push({
      message: { role: 'tool', content: execution.content, tool_call_id: call.id },
      extra: {
        toolCallId: call.id,
        ...(execution.error ? { toolError: execution.error.code } : {}),
        latencyMs: Math.max(0, deps.now() - started),
        metadata,
      },
    });
  }
  return record(episode, step, last);
}

/** A message of a step and the turn fields it is written with. */
interface StepEntry {
  readonly message: ChatMessage;
  readonly extra: Partial<TurnInput>;
}

/**
 * Writes a step's turns in one append (retried: appends are idempotent by index), then takes its
 * messages as the episode's. Returns an error outcome when the store cannot take them. The `last`
 * step is taken as the episode's at once (the verifier reads it) and written with the finish.
 */
async function record<TTask extends EnvironmentTask>(
  episode: Episode<TTask>,
  step: readonly StepEntry[],
  last = false,
): Promise<EndOutcome | undefined> {
  if (step.length === 0) return undefined;
  const { sink } = episode.options;
  const first = episode.messages.length;
  const turns: TurnInput[] = step.map(({ message, extra }, offset) => ({
    trajectoryId: sink.trajectoryId,
    index: first + offset,
    role: message.role,
    content: message.content,
    ...extra,
  }));
  if (last) {
    episode.messages.push(...step.map(({ message }) => message));
    episode.lastStep = turns;
    return undefined;
  }
  const written = await withRetries(() => sink.appendTurns(turns), {
    policy: episode.settings.retry,
    deps: episode.deps,
    isRetryable: () => true,
  });
  if (!written.ok) {
    const which = turns.length === 1 ? `turn ${first}` : `turns ${first}-${first + turns.length - 1}`;
    return { kind: 'error', reason: `store: ${which} not written: ${errorMessage(written.error)}` };
  }
  for (const [offset, { message }] of step.entries()) {
    episode.messages.push(message);
    emit(episode, { type: 'turn-end', trajectoryId: sink.trajectoryId, turn: turns[offset] as TurnInput });
  }
  return undefined;
}

async function end<TTask extends EnvironmentTask>(
  episode: Episode<TTask>,
  outcome: EndOutcome,
): Promise<EpisodeResult> {
  const { options } = episode;
  let closing: TrajectoryEnd = await scoreEpisode({
    environment: options.environment,
    task: options.task,
    messages: episode.messages,
    outcome,
    capabilities: episode.capabilities,
    signal: options.signal ?? new AbortController().signal,
  });
  const lastStep = episode.lastStep ?? [];
  const finished = await withRetries(() => options.sink.finish(closing, lastStep), {
    policy: episode.settings.retry,
    deps: episode.deps,
    isRetryable: () => true,
  });
  if (!finished.ok) {
    // The stored trajectory stays `running`; the store's own sweep has to close it. Its last step
    // was not written with it: a resume asks for it again.
    episode.messages.splice(episode.messages.length - lastStep.length);
    closing = {
      status: 'error',
      errorReason: `store: trajectory not finished: ${errorMessage(finished.error)}`,
    };
  } else {
    for (const turn of lastStep) emit(episode, { type: 'turn-end', trajectoryId: turn.trajectoryId, turn });
  }
  const result: EpisodeResult = {
    trajectoryId: options.sink.trajectoryId,
    status: closing.status,
    ...(closing.verifierReward !== undefined ? { reward: closing.verifierReward } : {}),
    ...(closing.detail !== undefined ? { detail: closing.detail } : {}),
    ...(closing.errorReason !== undefined ? { errorReason: closing.errorReason } : {}),
    turns: episode.messages.length,
    messages: episode.messages,
  };
  emit(episode, {
    type: 'episode-end',
    trajectoryId: result.trajectoryId,
    status: result.status,
    reward: result.reward,
    detail: result.detail,
    errorReason: result.errorReason,
    turns: result.turns,
  });
  return result;
}

function emit<TTask extends EnvironmentTask>(episode: Episode<TTask>, event: EpisodeEvent): void {
  try {
    episode.options.onEvent?.(event);
  } catch {
    // An observer's failure is not the episode's: ignored on purpose.
  }
}
