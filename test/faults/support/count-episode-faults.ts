// Counts, from the store, what went wrong with a scenario's trajectories after its fault: turns lost
// (a gap in the indices, a tool call nobody answered, a reply the endpoint delivered that is not
// stored), turns stored twice (a reply's tool call in two turns, a call answered twice, more replies
// stored than delivered) and leaks (a trajectory or a group left `running`). `found` says what, for
// the assertion message. Test-only; reads rows, never writes.
import type { Store } from '../../../db/store.ts';
import { trajectories } from '../../../db/schema/trajectories.ts';
import type { FaultOutcome } from './fault-outcome.ts';

export interface EpisodeFaultCount {
  readonly outcome: FaultOutcome;
  readonly found: readonly string[];
}

export interface CountEpisodeFaultsInput {
  readonly trajectoryIds: readonly string[];
  /**
   * Assistant replies that must be stored once each: completions the endpoint delivered to the edge,
   * or exchanges a proxy client got 200 for. Compared with the stored assistant turns the edge
   * sampled (not those a proxy client sent as history). Omitted: not compared.
   */
  readonly replies?: number;
  /** The trajectories are their client's to end (the recording proxy's): `running` is no leak. */
  readonly clientOwned?: boolean;
}

/** Every trajectory id in the store now (a scenario takes this before its fault, to count only new ones). */
export async function storedTrajectoryIds(store: Store): Promise<Set<string>> {
  const rows = await store.db.select({ id: trajectories.id }).from(trajectories);
  return new Set(rows.map((row) => row.id));
}

/** Trajectories stored since `before` was taken. */
export async function trajectoriesSince(store: Store, before: ReadonlySet<string>): Promise<string[]> {
  return [...(await storedTrajectoryIds(store))].filter((id) => !before.has(id));
}

export async function countEpisodeFaults(
  store: Store,
  input: CountEpisodeFaultsInput,
): Promise<EpisodeFaultCount> {
  let lostTurns = 0;
  let duplicates = 0;
  let leaks = 0;
  let sampled = 0;
  const found: string[] = [];
  const groups = new Set<string>();
  for (const id of input.trajectoryIds) {
    const { trajectory, turns } = await store.getTrajectory(id);
    if (trajectory.groupId) groups.add(trajectory.groupId);
    if (trajectory.status === 'running' && !input.clientOwned) {
      leaks += 1;
      found.push(`trajectory ${id} left running`);
    }
    const last = turns.at(-1);
    const gaps = last ? last.index + 1 - turns.length : 0;
    if (gaps > 0) {
      lostTurns += gaps;
      found.push(`trajectory ${id}: ${gaps} index gap(s)`);
    }
    const calls = new Map<string, number>();
    const answers = new Map<string, number>();
    for (const turn of turns) {
      if (turn.role === 'assistant' && turn.metadata?.fromClient !== true) sampled += 1;
      for (const call of turn.toolCalls ?? []) calls.set(call.id, (calls.get(call.id) ?? 0) + 1);
      if (turn.role === 'tool' && turn.toolCallId)
        answers.set(turn.toolCallId, (answers.get(turn.toolCallId) ?? 0) + 1);
    }
    for (const [call, times] of calls) {
      if (times > 1) {
        duplicates += times - 1;
        found.push(`trajectory ${id}: tool call ${call} in ${times} assistant turns`);
      }
      // A running trajectory may be between a call and its answer; an ended one may not.
      if (!answers.has(call) && trajectory.status !== 'running') {
        lostTurns += 1;
        found.push(`trajectory ${id}: tool call ${call} never answered`);
      }
    }
    for (const [call, times] of answers) {
      if (times > 1) {
        duplicates += times - 1;
        found.push(`trajectory ${id}: tool call ${call} answered ${times} times`);
      }
    }
  }
  if (input.replies !== undefined && input.replies !== sampled) {
    if (input.replies > sampled) lostTurns += input.replies - sampled;
    else duplicates += sampled - input.replies;
    found.push(`${input.replies} replies delivered, ${sampled} assistant turns stored`);
  }
  for (const groupId of groups) {
    const { group } = await store.getGroup({ groupId });
    if (group.status === 'running') {
      leaks += 1;
      found.push(`group ${groupId} left running`);
    }
  }
  return { outcome: { lostTurns, duplicates, leaks }, found };
}
