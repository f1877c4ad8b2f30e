// The consumer side of a rollout: runs the episode one queued message names, idempotently. The
// message may arrive more than once (Cloudflare Queues deliver at least once; the Node queue retries
// a run that failed), so the stored trajectory decides what happens:
// - not running any more (finished, truncated, error): acknowledged, nothing runs again;
// - running with turns stored: the episode resumes after them (stored turns are replayed into the
//   loop, unanswered tool calls of the last turn are run, then the policy is asked again);
// - a second run racing the first loses at its first append (the store refuses a different turn at
//   a stored index) and stops without closing the trajectory the winner owns.
// A store that fails mid-way throws EpisodeInterrupted, so the queue delivers the message again later.
// Before anything runs, the runner claims the episode's lease (db/store/trajectory-leases.ts): an
// episode another live runner holds is skipped, and one taken over mid-run stops (its new runner
// carries on from the stored turns); while it runs, its turns and the keeper's beats renew the lease.
// A claimed episode holding a turn another writer stored ends as `error`, never resumed from it.
import { formatIssues } from '../../protocol/format-issues.ts';
import { isStoreError } from '../../db/errors.ts';
import type { Task } from '../../db/schema/tasks.ts';
import type { Store, TrajectoryClaim } from '../../db/store.ts';
import { jsonEqual } from '../../protocol/canonical-json.ts';
import type { Capabilities, CapabilityName } from '../environments/capabilities.ts';
import type { Environment, EnvironmentTask } from '../environments/environment.ts';
import { EpisodeSetupError } from '../episode/episode-setup-error.ts';
import type { EpisodeDeps } from '../episode/run-episode.ts';
import { runEpisode } from '../episode/run-episode.ts';
import type { EpisodeSettings } from '../episode/episode-defaults.ts';
import type { EpisodeEvent } from '../episode/episode-events.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { EndStatus } from '../../protocol/finish.ts';
import type { PolicyClient } from '../policy/policy-client.ts';
import type { SamplingSettings } from '../policy/sampling-settings.ts';
import { type TrajectoryRouteRow, recordedRoute } from '../routing/route.ts';
import { episodeMessageSchema } from './episode-message.ts';
import { rolloutMetadataSchema } from './rollout-metadata.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import { StoreTrajectorySink } from './store-trajectory-sink.ts';
import { resumeFromTurns } from './turn-messages.ts';

/** Who runs the episode: the name its lease carries, and the keeper that beats it. */
export interface EpisodeRunner {
  readonly name: string;
  readonly keeper: LeaseKeeper;
}

export interface EpisodeRunnerContext {
  readonly store: Store;
  readonly runner: EpisodeRunner;
  readonly environments: Readonly<Record<string, Environment>>;
  readonly policy: PolicyClient;
  /** Services for tools and verifiers (the SQL sandbox), injected by the runtime: the core opens none. */
  readonly capabilities?: Capabilities;
  /**
   * Starts the capabilities an episode requires that start on first use (the embedded SQL sandbox, seconds
   * to build), before its first turn: a tool's timeout then never pays for a start. Resolves when they are
   * up or could not start (the tool then says so); the Node edge gives it.
   */
  readonly startCapabilities?: (required: readonly CapabilityName[]) => Promise<void>;
  /** Overrides of the loop's settings for every episode (timeouts, retry policy). */
  readonly settings?: Partial<EpisodeSettings>;
  /** Timers and randomness, for tests. */
  readonly deps?: Partial<EpisodeDeps>;
  /** Aborted when the process stops: the episode is cut short but its trajectory stays `running`. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: EpisodeEvent) => void;
}

export type QueuedEpisodeOutcome =
  | { readonly kind: 'ran'; readonly status: EndStatus; readonly turns: number; readonly resumed: boolean }
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'superseded'; readonly reason: string }
  | { readonly kind: 'failed-setup'; readonly reason: string };

/** The store failed while the episode ran; its stored turns stay, and a later delivery resumes it. */
export class EpisodeInterrupted extends Error {
  override readonly name = 'EpisodeInterrupted';
  readonly code = 'episode-interrupted';
}

export async function runQueuedEpisode(
  context: EpisodeRunnerContext,
  body: unknown,
): Promise<QueuedEpisodeOutcome> {
  const parsed = episodeMessageSchema.safeParse(body);
  if (!parsed.success) return { kind: 'skipped', reason: `invalid message: ${formatIssues(parsed.error)}` };
  const { store, runner } = context;
  const { trajectoryId } = parsed.data;
  // Claimed before its turns are read, so no other runner appends after the read. The claim brings
  // the trajectory and its task back with it (one round trip).
  const claim = await store.claimTrajectory({
    trajectoryId,
    runner: runner.name,
    leaseSeconds: runner.keeper.leaseSeconds,
  });
  if (!claim.claimed) {
    runner.keeper.letGo(trajectoryId);
    return { kind: 'skipped', reason: `trajectory ${trajectoryId}: ${claim.reason}` };
  }
  const lost = new AbortController();
  runner.keeper.hold(trajectoryId, runner.name, (reason) => lost.abort(new Error(reason)));
  try {
    return await runClaimed(context, claim, lost.signal);
  } finally {
    runner.keeper.letGo(trajectoryId);
  }
}

async function runClaimed(
  context: EpisodeRunnerContext,
  claim: Extract<TrajectoryClaim, { claimed: true }>,
  lost: AbortSignal,
): Promise<QueuedEpisodeOutcome> {
  const { store, runner } = context;
  const trajectoryId = claim.trajectory.id;
  if (claim.foreignTurn) {
    // The episode never continues from turns it did not write (docs/edge.md, "Who writes a trajectory"):
    // the store refuses such writes, so one here was written around it; the episode ends, kept for a look.
    const { index, writer } = claim.foreignTurn;
    const reason = `turn ${index} was stored by a ${writer}, not by this episode's runner; the episode does not resume from it`;
    await store.finishTrajectory({ trajectoryId, status: 'error', errorReason: reason, runner: runner.name });
    return { kind: 'ran', status: 'error', turns: claim.trajectory.turnCount, resumed: false };
  }
  // A fresh episode has no turns to read; a resumed one reads them now that no one else appends.
  const { trajectory, turns } =
    claim.trajectory.turnCount > 0
      ? await store.getTrajectory(trajectoryId)
      : { trajectory: claim.trajectory, turns: [] };
  if (trajectory.status !== 'running') {
    return { kind: 'skipped', reason: `trajectory ${trajectoryId} already ended (${trajectory.status})` };
  }
  const setup = prepare(context, trajectory, claim.task);
  if (typeof setup === 'string') return failSetup(store, trajectoryId, setup);
  const resumed = turns.length > 0;
  // The episode is offered the tools of the code running it: if they changed since its rollout
  // started (a deploy while it was queued), those are what training must render.
  const tools = setup.environment.tools.map((tool) => tool.spec);
  if (!resumed && !jsonEqual(trajectory.tools, tools))
    await store.setTrajectoryTools({ trajectoryId, tools });
  const signal = context.signal ? AbortSignal.any([context.signal, lost]) : lost;
  // A cancelled run (the edge is stopping) leaves the trajectory running, to resume on the next start.
  const sink = new StoreTrajectorySink(store, trajectoryId, {
    lease: { runner: runner.name, leaseSeconds: runner.keeper.leaseSeconds },
    holdFinish: () => signal.aborted,
    onStored: () => runner.keeper.renewed(trajectoryId),
    history: turns,
  });
  await context.startCapabilities?.(setup.environment.requires);
  let result: Awaited<ReturnType<typeof runEpisode>>;
  try {
    result = await runEpisode({
      environment: setup.environment,
      task: setup.task,
      policy: context.policy,
      sink,
      model: setup.model,
      settings: { ...context.settings, ...setup.sampling },
      capabilities: context.capabilities ?? {},
      ...(resumed ? { resume: resumeFromTurns(turns) } : {}),
      signal,
      ...(context.onEvent ? { onEvent: context.onEvent } : {}),
      ...(context.deps ? { deps: context.deps } : {}),
    });
  } catch (error) {
    if (error instanceof EpisodeSetupError) return failSetup(store, trajectoryId, error.message);
    throw error;
  }
  if (lost.aborted) return { kind: 'superseded', reason: errorMessage(lost.reason) };
  if (sink.superseded) return { kind: 'superseded', reason: sink.superseded };
  if (sink.held) {
    // Handed back at once, so another edge need not wait for the lease to lapse.
    await store.releaseTrajectories({ runner: runner.name, trajectoryIds: [trajectoryId] }).catch(() => {});
    return { kind: 'skipped', reason: 'stopped with the edge; left running to resume' };
  }
  if (sink.storeFailure !== undefined && result.status === 'error') {
    throw new EpisodeInterrupted(
      `trajectory ${trajectoryId}: store failed mid-episode (${errorMessage(sink.storeFailure)})`,
      { cause: sink.storeFailure },
    );
  }
  return { kind: 'ran', status: result.status, turns: result.turns, resumed };
}

interface Setup {
  readonly environment: Environment;
  readonly task: EnvironmentTask;
  readonly model: string;
  readonly sampling: SamplingSettings;
}

/**
 * What the episode needs from its claimed row and task, or the reason it cannot run (a string). The
 * stored task is JSON from another process: it is checked against the environment here, the one place
 * it is read.
 */
function prepare(
  context: EpisodeRunnerContext,
  trajectory: TrajectoryRouteRow & { env: string; taskId: string | null },
  stored: Task | null,
): Setup | string {
  const environment = Object.hasOwn(context.environments, trajectory.env)
    ? context.environments[trajectory.env]
    : undefined;
  if (!environment) return `unknown environment "${trajectory.env}"`;
  if (!trajectory.taskId) return 'the trajectory has no task';
  const route = recordedRoute(trajectory);
  if (!route) return 'trajectory metadata: no route (the model to ask for) was recorded';
  const metadata = rolloutMetadataSchema.safeParse(trajectory.metadata);
  if (!metadata.success) return `trajectory metadata: ${formatIssues(metadata.error)}`;
  if (!stored) return `task ${trajectory.taskId} does not exist`;
  const task = environment.taskSchema.safeParse(stored.input);
  if (!task.success)
    return `task ${stored.key} does not fit ${environment.name}: ${formatIssues(task.error)}`;
  return { environment, task: task.data, model: route.model, sampling: metadata.data.settings };
}

async function failSetup(store: Store, trajectoryId: string, reason: string): Promise<QueuedEpisodeOutcome> {
  await abandonEpisode(store, trajectoryId, `setup: ${reason}`);
  return { kind: 'failed-setup', reason };
}

/**
 * Ends a trajectory that will not run (again) with status `error`, so its group can complete. A
 * trajectory that already ended is left as it is.
 */
export async function abandonEpisode(store: Store, trajectoryId: string, reason: string): Promise<void> {
  try {
    // As the edge that runs the slot (no lease: it may never have been claimed).
    await store.finishTrajectory({
      trajectoryId,
      status: 'error',
      errorReason: reason.slice(0, 2000),
      writer: 'runner',
    });
  } catch (error) {
    if (isStoreError(error, 'trajectory-closed')) return;
    throw error;
  }
}
