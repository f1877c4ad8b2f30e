// Starting a rollout group: pick (or sample) the task, route it to a policy version or experiment
// arm, create the group with one trajectory per slot (so every queued message names an existing
// trajectory and a re-delivery finds its state), then hand one message per trajectory to the
// dispatcher. The episodes run later; the caller gets the ids at once.
import { z } from 'zod';
import { taskSplits } from '../../protocol/statuses.ts';
import type { RolloutGroup } from '../../db/schema/rollout-groups.ts';
import type { Task } from '../../db/schema/tasks.ts';
import type { Store } from '../../db/store.ts';
import { type CapabilityName, missingCapabilities } from '../environments/capabilities.ts';
import type { Environment, EnvironmentTask } from '../environments/environment.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import type { ReplicaRouter } from '../routing/replica-router.ts';
import { resolveRoute } from '../routing/resolve-route.ts';
import type { RouteCache } from '../routing/route-cache.ts';
import { groupRouteFields, type Route, trajectoryRouteFields } from '../routing/route.ts';
import { type EpisodeDispatcher, episodeMessage } from './episode-message.ts';
import { type SamplingSettings, samplingSettingsSchema } from '../policy/sampling-settings.ts';
import { type RolloutMetadata, slotSeed } from './rollout-metadata.ts';
import { abandonEpisode } from './run-queued-episode.ts';
import { type AdmissionLimits, admitForPolicy, admitOnEdge, type EdgeBacklog } from './admit-episodes.ts';

/** Largest group one request may start; GRPO groups are usually 4–64 (DeepSeekMath used 64). */
export const maxGroupSize = 256;

export const rolloutRequestSchema = z
  .strictObject({
    env: z.string().min(1).max(200),
    /** A stored task's id (uuid); absent: a new task is sampled from `split`. */
    taskId: z.uuid().optional(),
    split: z.enum(taskSplits).optional(),
    /** Seed for sampling the task (absent: random). */
    taskSeed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .optional(),
    groupSize: z.number().int().min(1).max(maxGroupSize),
    policy: z.string().min(1).max(300).optional(),
    experiment: z.string().min(1).max(300).optional(),
    /** What experiment routing hashes; default: a fresh random key per group. */
    stickinessKey: z.string().min(1).max(500).optional(),
    /** Strict here (an unknown key is a 400 naming `settings.<key>`), lenient where stored ones are read. */
    settings: z.strictObject(samplingSettingsSchema.shape).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((request, ctx) => {
    if (request.taskId !== undefined && request.split !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['split'], message: 'give taskId or split, not both' });
    }
    if (request.policy !== undefined && request.experiment !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['experiment'], message: 'give policy or experiment, not both' });
    }
  });
export type RolloutRequest = z.output<typeof rolloutRequestSchema>;

export interface StartedRollout {
  readonly groupId: string;
  readonly taskId: string;
  readonly taskKey: string;
  readonly model: string;
  readonly policyVersionId: string | null;
  readonly experimentArmId: string | null;
  readonly arm: string | null;
  readonly trajectoryIds: readonly string[];
}

export interface StartRolloutContext {
  readonly store: Store;
  readonly environments: Readonly<Record<string, Environment>>;
  readonly dispatcher: EpisodeDispatcher;
  readonly defaultModel: string | undefined;
  /** The inference fleet, when there is one: a version no replica holds is refused (resolveRoute). */
  readonly fleet?: ReplicaRouter;
  /**
   * The capabilities this edge's episode runner provides (e.g. `sql` when a SQL sandbox is set up);
   * an environment needing another is refused here, before anything is written. Absent: not checked.
   */
  readonly provides?: readonly CapabilityName[];
  /** How long a queued slot waits for its first runner before a sweep counts it lost (the episode lease). */
  readonly awaitRunnerSeconds: number;
  /** Draws a seed when the request gives none; injected so tests can fix it. */
  readonly randomSeed?: () => number;
  /** The edge's route table (routing/route-cache.ts); absent: a policy name is looked up every time. */
  readonly routes?: RouteCache;
  /**
   * The admission bounds (admit-episodes.ts), and this edge's queue when it has one (Node): a group
   * past them is refused with BacklogFull before anything is written. Absent: everything is admitted.
   */
  readonly admission?: {
    readonly limits: AdmissionLimits;
    readonly backlog?: () => EdgeBacklog;
  };
}

/** What creating a group (without its slots) needs. */
type GroupContext = Omit<StartRolloutContext, 'dispatcher' | 'awaitRunnerSeconds'>;

export interface CreatedGroup {
  readonly group: RolloutGroup;
  readonly environment: Environment;
  /** The stored task row. */
  readonly taskRow: Task;
  /** Its input, checked against the environment's task schema once, here. */
  readonly task: EnvironmentTask;
  readonly route: Route;
  readonly stickinessKey: string;
  readonly settings: SamplingSettings;
}

/**
 * The group alone: task chosen or sampled, routed once (all members share the arm: GRPO compares
 * samples of one policy), no trajectories yet. POST /v1/groups stops here for outside agents, who
 * join with POST /v1/trajectories {groupId}; rollouts go on to start and queue every slot. One
 * transaction: a request refused after the task is upserted (an unknown policy, bad metadata) leaves
 * no task row behind.
 */
export function createRolloutGroup(context: GroupContext, request: RolloutRequest): Promise<CreatedGroup> {
  const environment = environmentOf(context, request);
  return context.store.transaction((store) => writeRolloutGroup({ ...context, store }, environment, request));
}

/** The named environment, checked before any store work (a Worker without a database still answers 400). */
function environmentOf(
  context: Pick<StartRolloutContext, 'environments'>,
  request: RolloutRequest,
): Environment {
  const environment = Object.hasOwn(context.environments, request.env)
    ? context.environments[request.env]
    : undefined;
  if (!environment) {
    throw invalidField(
      'env',
      `unknown environment "${request.env}"; known: ${Object.keys(context.environments).join(', ')}`,
    );
  }
  return environment;
}

/** The task and the route of a group about to be written, and the metadata it is written with. */
async function routeRolloutGroup(context: GroupContext, environment: Environment, request: RolloutRequest) {
  const { store } = context;
  const { taskRow, task } = await chooseTask(context, environment, request);
  const stickinessKey = request.stickinessKey ?? crypto.randomUUID();
  const route = await resolveRoute(
    store,
    {
      ...(request.policy !== undefined ? { policy: request.policy } : {}),
      ...(request.experiment !== undefined ? { experiment: request.experiment } : {}),
      stickinessKey,
    },
    context.defaultModel,
    {
      ...(context.fleet ? { fleet: context.fleet } : {}),
      ...(context.routes ? { routes: context.routes } : {}),
    },
  );
  const settings = request.settings ?? {};
  const routed = groupRouteFields(route);
  const metadata = {
    ...request.metadata,
    env: environment.name,
    ...routed.metadata,
    stickinessKey,
    settings,
  };
  return { taskRow, task, route, stickinessKey, settings, metadata };
}

/** groupRouteFields without the metadata, which the caller writes merged with its own. */
function groupFields(route: Route) {
  const { metadata: _metadata, ...fields } = groupRouteFields(route);
  return fields;
}

async function writeRolloutGroup(
  context: GroupContext,
  environment: Environment,
  request: RolloutRequest,
): Promise<CreatedGroup> {
  const { taskRow, task, route, stickinessKey, settings, metadata } = await routeRolloutGroup(
    context,
    environment,
    request,
  );
  // A group for outside agents queues nothing here; it is refused only while its policy is past its bound.
  if (context.admission) {
    const { limits, backlog } = context.admission;
    await admitForPolicy(context.store, route, 0, limits, backlog?.());
  }
  const group = await context.store.createGroup({
    taskId: taskRow.id,
    size: request.groupSize,
    ...groupFields(route),
    metadata,
  });
  return { group, environment, taskRow, task, route, stickinessKey, settings };
}

export async function startRollout(
  context: StartRolloutContext,
  request: RolloutRequest,
): Promise<StartedRollout> {
  const { store } = context;
  const environment = environmentOf(context, request);
  if (context.provides) {
    const provided = Object.fromEntries(context.provides.map((name) => [name, true]));
    const missing = missingCapabilities(environment.requires, provided);
    if (missing.length > 0) {
      throw invalidField(
        'env',
        `environment ${environment.name} needs capabilities.${missing.join(', capabilities.')}, which this edge does not provide${missing.includes('sql') ? ' (set EDGERL_SQL_DATABASE_URL to a SQL sandbox: docs/sql-sandbox.md)' : ''}`,
      );
    }
  }
  // This edge's queue first (no store work), then the policy's episodes in flight, in the transaction
  // that writes the group: a refused request writes nothing.
  const backlog = context.admission?.backlog?.();
  if (context.admission && backlog) admitOnEdge(backlog, request.groupSize, context.admission.limits);
  // The group and every slot's trajectory commit together, before anything is queued: a failed
  // request writes nothing, and every queued message names a committed trajectory.
  const { group, taskRow, route, trajectoryIds } = await store.transaction(async (tx) => {
    const { taskRow, route, stickinessKey, settings, metadata } = await routeRolloutGroup(
      { ...context, store: tx },
      environment,
      request,
    );
    if (context.admission)
      await admitForPolicy(tx, route, request.groupSize, context.admission.limits, backlog);
    const routed = trajectoryRouteFields(route);
    // The group and its slots in one statement (startGroup): one round trip whatever the size.
    const started = await tx.startGroup({
      taskId: taskRow.id,
      size: request.groupSize,
      ...groupFields(route),
      metadata,
      slots: Array.from({ length: request.groupSize }, (_, slot) => {
        const seed = slotSeed(settings.seed, slot);
        const rollout: RolloutMetadata = {
          slot,
          settings: { ...settings, ...(seed !== undefined ? { seed } : {}) },
        };
        return {
          ...(routed.experimentArmId ? { experimentArmId: routed.experimentArmId } : {}),
          stickinessKey,
          metadata: { ...routed.metadata, ...rollout },
        };
      }),
      // Stored with each trajectory, so training renders what the policy was offered even after the
      // environment's code changes.
      tools: environment.tools.map((tool) => tool.spec),
      awaitRunnerSeconds: context.awaitRunnerSeconds,
    });
    return {
      group: started.group,
      taskRow,
      route,
      trajectoryIds: started.trajectories.map((trajectory) => trajectory.id),
    };
  });
  try {
    await context.dispatcher.dispatch(trajectoryIds.map((id) => episodeMessage(group.id, id)));
  } catch (error) {
    // Nothing will run them: end them now so the group completes (as errors) instead of hanging.
    for (const id of trajectoryIds) await abandonEpisode(store, id, `dispatch: ${errorMessage(error)}`);
    throw new ApiError('unavailable', `the episodes could not be queued: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  return {
    groupId: group.id,
    taskId: taskRow.id,
    taskKey: taskRow.key,
    model: route.model,
    policyVersionId: route.policyVersionId ?? null,
    experimentArmId: route.experimentArmId ?? null,
    arm: route.armName ?? null,
    trajectoryIds,
  };
}

/** The task row and its typed input: a stored task is checked against the environment here, once. */
async function chooseTask(
  context: GroupContext,
  environment: Environment,
  request: RolloutRequest,
): Promise<{ taskRow: Task; task: EnvironmentTask }> {
  const { store } = context;
  if (request.taskId !== undefined) {
    const taskRow = await store.getTask(request.taskId).catch((error: unknown) => {
      throw invalidField('taskId', errorMessage(error));
    });
    if (taskRow.env !== environment.name) {
      throw invalidField(
        'taskId',
        `task ${taskRow.id} belongs to environment "${taskRow.env}", not "${environment.name}"`,
      );
    }
    const parsed = environment.taskSchema.safeParse(taskRow.input);
    if (!parsed.success)
      throw invalidField('taskId', `stored task ${taskRow.key} does not fit ${environment.name}`);
    return { taskRow, task: parsed.data };
  }
  const seed = request.taskSeed ?? (context.randomSeed ?? randomSeed)();
  // The environment's own sampler: typed already, and plain JSON (the store checks that again).
  const split = request.split ?? 'train';
  let task: EnvironmentTask;
  try {
    task = environment.sampleTask(split, seed);
  } catch (error) {
    // An environment without tasks in a split (sql-agent has no validation questions) refuses it.
    if (split === 'train') throw error;
    throw invalidField('split', `${environment.name} cannot sample a ${split} task: ${errorMessage(error)}`);
  }
  const taskRow = await store.upsertTask({
    env: environment.name,
    key: task.id,
    input: task,
    split: task.split,
    seed,
  });
  return { taskRow, task };
}

function randomSeed(): number {
  return (crypto.getRandomValues(new Uint32Array(1))[0] as number) >>> 1;
}
