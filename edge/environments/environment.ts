// An environment: the system prompt, the tools, a seeded task sampler with train and eval splits,
// a turn limit and an optional verifier. Pure description: running episodes is edge/episode's job.
import type { z } from 'zod';
import type { ChatMessage } from '../../protocol/chat.ts';
import type { TaskSplit } from '../../protocol/statuses.ts';
import type { Capabilities, CapabilityName } from './capabilities.ts';
import { seededRandom } from './seeded-random.ts';
import type { Tool } from './tool.ts';

/** How the policy is asked to use the tools: OpenAI's `tool_choice` values that episodes use. */
export type ToolChoice = 'auto' | 'required';

/**
 * What every task carries; environments add their own fields. Tasks are plain JSON: a type alias
 * rather than an interface so that a task is assignable to the store's JSON type without a cast.
 */
export type EnvironmentTask = {
  /** Stable across runs; decides the split. */
  readonly id: string;
  readonly split: TaskSplit;
  /** The first user message of the episode. */
  readonly prompt: string;
};

export interface VerifierInput<TTask> {
  readonly task: TTask;
  /** Every message of the episode, system prompt first. */
  readonly messages: readonly ChatMessage[];
  /** The content of the last assistant message when it made no tool call, else null. */
  readonly finalAnswer: string | null;
  readonly status: 'finished' | 'truncated';
}

export interface VerifierContext extends Capabilities {
  readonly signal: AbortSignal;
}

export interface VerifierResult {
  /** In [0, 1]. */
  readonly reward: number;
  /** One line for people reading the trajectory: why this reward. */
  readonly detail?: string;
}

export interface EnvironmentDefinition<TTask extends EnvironmentTask> {
  /** Kebab-case and stable: stored with every trajectory. */
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  readonly tools: readonly Tool<TTask>[];
  /** The most assistant turns an episode may take; reaching it ends the episode as `truncated`. */
  readonly maxTurns: number;
  /** Default limit for one tool call, in milliseconds. */
  readonly toolTimeoutMs?: number;
  /** Capabilities the tools or the verifier use; checked before an episode starts. */
  readonly requires?: readonly CapabilityName[];
  /**
   * OpenAI's `tool_choice` for every policy call (default "auto"). "required" makes each assistant
   * turn one or more tool calls, decoded under a grammar on endpoints that guide decoding (edgerl
   * serve-model, vLLM): calls always parse, but no turn can be a plain-text answer, so an episode
   * runs to `maxTurns` unless a tool ends it.
   */
  readonly toolChoice?: ToolChoice;
  /**
   * Sends every tool marked `strict` (OpenAI structured outputs; default false). Under "auto" a
   * guiding endpoint still lets the model answer in text, but each call it opens is decoded under the
   * tool's parameters schema, so calls cannot break mid-JSON. The mark goes on the wire only: the
   * stored specs (and so the trainer's render) stay without it, as serve-model renders none.
   */
  readonly strictTools?: boolean;
  /** Validates a task that comes from outside (a request body, a stored trajectory). */
  readonly taskSchema: z.ZodType<TTask>;
  /** The same (split, seed) gives the same task. */
  sampleTask(split: TaskSplit, seed: number): TTask;
  /** `n` tasks of one split; defaults to `sampleTask` with seeds drawn from `seed`. */
  tasks?(split: TaskSplit, n: number, seed: number): TTask[];
  /** Scores a finished or truncated episode. Throwing counts as an infrastructure failure. */
  verify?(input: VerifierInput<TTask>, context: VerifierContext): Promise<VerifierResult> | VerifierResult;
}

// Methods rather than function properties throughout, so that an `Environment<SpecificTask>` can be
// held as an `Environment` in a registry (method parameters are checked bivariantly).
export interface Environment<TTask extends EnvironmentTask = EnvironmentTask> {
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  readonly tools: readonly Tool<TTask>[];
  readonly maxTurns: number;
  readonly toolTimeoutMs: number;
  readonly requires: readonly CapabilityName[];
  readonly toolChoice: ToolChoice;
  readonly strictTools: boolean;
  readonly taskSchema: z.ZodType<TTask>;
  sampleTask(split: TaskSplit, seed: number): TTask;
  tasks(split: TaskSplit, n: number, seed: number): TTask[];
  verify?(input: VerifierInput<TTask>, context: VerifierContext): Promise<VerifierResult> | VerifierResult;
}

/** 10 s: generous for a lookup or a small query, short enough that a hung tool cannot stall a rollout batch. */
export const defaultToolTimeoutMs = 10_000;

const environmentNamePattern = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** Checks a definition and fills its defaults; throws naming the first problem. */
export function defineEnvironment<TTask extends EnvironmentTask>(
  definition: EnvironmentDefinition<TTask>,
): Environment<TTask> {
  const { name } = definition;
  if (!environmentNamePattern.test(name)) {
    throw new Error(`environment name "${name}" must be kebab-case (e.g. "multi-hop")`);
  }
  if (!Number.isInteger(definition.maxTurns) || definition.maxTurns < 1) {
    throw new Error(`environment ${name}: maxTurns must be a positive integer, got ${definition.maxTurns}`);
  }
  const toolTimeoutMs = definition.toolTimeoutMs ?? defaultToolTimeoutMs;
  if (!(toolTimeoutMs > 0)) {
    throw new Error(`environment ${name}: toolTimeoutMs must be positive, got ${toolTimeoutMs}`);
  }
  const seen = new Set<string>();
  for (const tool of definition.tools) {
    if (seen.has(tool.name)) throw new Error(`environment ${name}: two tools are named "${tool.name}"`);
    seen.add(tool.name);
  }
  const toolChoice = definition.toolChoice ?? 'auto';
  if (toolChoice === 'required' && definition.tools.length === 0) {
    throw new Error(`environment ${name}: toolChoice "required" needs at least one tool`);
  }
  const strictTools = definition.strictTools ?? false;
  const sampleTask = definition.sampleTask.bind(definition);
  const tasks = definition.tasks?.bind(definition) ?? defaultTasks(sampleTask);
  return {
    name,
    description: definition.description,
    systemPrompt: definition.systemPrompt,
    tools: definition.tools,
    maxTurns: definition.maxTurns,
    toolTimeoutMs,
    requires: definition.requires ?? [],
    toolChoice,
    strictTools,
    taskSchema: definition.taskSchema,
    sampleTask,
    tasks(split, n, seed) {
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
      return tasks(split, n, seed);
    },
    ...(definition.verify ? { verify: definition.verify.bind(definition) } : {}),
  };
}

function defaultTasks<TTask>(sampleTask: (split: TaskSplit, seed: number) => TTask) {
  return (split: TaskSplit, n: number, seed: number): TTask[] => {
    const random = seededRandom(seed);
    return Array.from({ length: n }, () => sampleTask(split, Math.floor(random() * 2 ** 32)));
  };
}
