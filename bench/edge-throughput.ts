// bench:edge, part 2: sustained turns per second with N episodes running at once (POST /v1/rollouts of
// multi-hop groups of up to 8, as GRPO asks for them, run by the Node edge's in-process queue with
// episodeConcurrency N), beside the store's own ceiling: bare appendTurn calls per second with as many
// concurrent writers. Round trips are the counting store's count over the whole run (group starts,
// claims, lease beats, appends, finishes) divided by the turns stored. The count check compares three
// numbers: the turns the episodes said they had when they ended, the turn-end events the loop
// reported, and the rows the store holds; any episode not ended `finished` is counted too.
import { and, count, eq, inArray } from 'drizzle-orm';
import { trajectories } from '../db/schema/trajectories.ts';
import { turns } from '../db/schema/turns.ts';
import type { Store } from '../db/store.ts';
import { startEdge } from '../edge/runtime/node.ts';
import type { CountingStore } from '../test/support/counting-store.ts';
import { fmt } from './bench-format.ts';
import { benchApiKey, benchEdgeConfig } from './edge-bench-config.ts';

export interface ThroughputRun {
  readonly concurrency: number;
  readonly episodes: number;
  readonly seconds: number;
  readonly roundTrips: number;
  /** Those round trips by statement kind (test/support/counting-store.ts' statementKind). */
  readonly statements: ReadonlyMap<string, number>;
  /** Sum of the `turns` each episode-end event gave. */
  readonly expectedTurns: number;
  /** turn-end events. */
  readonly reportedTurns: number;
  readonly storedTurns: number;
  /** Trajectories of the run whose stored status is `finished`. */
  readonly finished: number;
  readonly ceiling: number;
}

/** Lost = turns an episode counted but the store does not hold; duplicates would show as more rows. */
export function countCheck(run: ThroughputRun): string {
  const { expectedTurns: expected, reportedTurns: reported, storedTurns: stored } = run;
  const unfinished = run.episodes - run.finished;
  if (expected === reported && reported === stored && unfinished === 0) return `ok (${stored} = ${reported})`;
  return `MISMATCH: ${stored} stored, ${reported} reported, ${expected} counted by episodes, ${unfinished} not finished`;
}

export async function measureThroughput(
  counting: CountingStore,
  inferenceUrl: string,
  concurrency: number,
  episodes: number,
): Promise<ThroughputRun> {
  const { store } = counting;
  let expectedTurns = 0;
  let reportedTurns = 0;
  const edge = await startEdge({
    config: benchEdgeConfig(inferenceUrl, concurrency),
    port: 0,
    store,
    resumeUnfinished: false,
    log: (line) => process.stderr.write(`edge: ${line}\n`),
    onEpisodeEvent: (event) => {
      if (event.type === 'turn-end') reportedTurns += 1;
      else if (event.type === 'episode-end') expectedTurns += event.turns;
    },
  });
  const trajectoryIds: string[] = [];
  let seconds: number;
  let roundTrips: number;
  let statements: ReadonlyMap<string, number>;
  try {
    counting.reset();
    const started = performance.now();
    const posts: Promise<void>[] = [];
    for (let left = episodes; left > 0; left -= 8) {
      const groupSize = Math.min(8, left);
      posts.push(
        (async () => {
          const response = await fetch(`${edge.url}/v1/rollouts`, {
            method: 'POST',
            headers: { authorization: `Bearer ${benchApiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ env: 'multi-hop', groupSize }),
          });
          const body = (await response.json()) as { trajectoryIds?: string[] };
          if (!response.ok || !body.trajectoryIds)
            throw new Error(`POST /v1/rollouts: HTTP ${response.status} ${JSON.stringify(body)}`);
          trajectoryIds.push(...body.trajectoryIds);
        })(),
      );
      // A few groups in flight at once, as several trainers would post them; all at once would
      // measure the HTTP server's accept queue instead.
      if (posts.length >= 16) await Promise.all(posts.splice(0));
    }
    await Promise.all(posts);
    await edge.queue.idle();
    seconds = (performance.now() - started) / 1000;
    roundTrips = counting.roundTrips();
    statements = new Map(counting.statements());
  } finally {
    await edge.close();
  }
  const [stored] = await store.db
    .select({ total: count() })
    .from(turns)
    .where(inArray(turns.trajectoryId, trajectoryIds));
  const [finished] = await store.db
    .select({ total: count() })
    .from(trajectories)
    .where(and(inArray(trajectories.id, trajectoryIds), eq(trajectories.status, 'finished')));
  return {
    concurrency,
    episodes: trajectoryIds.length,
    seconds,
    roundTrips,
    statements,
    expectedTurns,
    reportedTurns,
    storedTurns: stored?.total ?? 0,
    finished: finished?.total ?? 0,
    ceiling: await storeCeiling(store, concurrency),
  };
}

/** Bare appendTurn calls per second with `writers` concurrent writers for two seconds. */
async function storeCeiling(store: Store, writers: number): Promise<number> {
  const ids: string[] = [];
  for (let n = 0; n < writers; n++) ids.push((await store.startTrajectory({ env: 'bench-ceiling' })).id);
  const deadline = performance.now() + 2000;
  const started = performance.now();
  const counts = await Promise.all(
    ids.map(async (trajectoryId) => {
      let index = 0;
      while (performance.now() < deadline) {
        await store.appendTurn({
          trajectoryId,
          index,
          role: index % 2 ? 'assistant' : 'user',
          content: `turn ${index}`,
        });
        index += 1;
      }
      return index;
    }),
  );
  return counts.reduce((sum, n) => sum + n, 0) / ((performance.now() - started) / 1000);
}

/** What the store's statements are, by the kind the counting store gives them (the first words). */
const statementNames: readonly (readonly [string, string])[] = [
  ['with recursive advanced as ( update trajectories', 'append (a step)'],
  ['with claimed as ( update trajectories', 'claim (with the row and task)'],
  ['with recursive final_step as ( update trajectories', 'last step with the finish (and the group)'],
  ['with finished as ( update trajectories', 'finish alone (with the group)'],
  ['with task as ( select id, env from tasks', 'start group (with its slots)'],
  ['update "trajectories"', 'bulk claim at dispatch (per group), lease beats'],
  ['select "id", "policy_id", "version"', 'route lookup (then cached)'],
  ['select "policy_versions"', 'route lookup (then cached)'],
  ['insert into "tasks"', 'task upsert (group start)'],
  ['begin', 'begin (group start)'],
  ['commit', 'commit (group start)'],
];

/** The run's round trips per stored turn by statement, largest first, one line each. */
export function statementLines(run: ThroughputRun): string[] {
  const byName = new Map<string, number>();
  for (const [kind, count] of run.statements) {
    const name = statementNames.find(([prefix]) => kind.startsWith(prefix))?.[1] ?? kind;
    byName.set(name, (byName.get(name) ?? 0) + count);
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `    ${fmt(count / run.storedTurns, 5, 3)}  ${name}`);
}

export const throughputHeader =
  'sustained throughput  episodes   turns   turns/s  trips/turn  store ceiling appends/s  ratio   count check';

export function throughputLine(run: ThroughputRun): string {
  const perSecond = run.storedTurns / run.seconds;
  return [
    `  ${String(run.concurrency).padStart(4)} concurrent   `,
    String(run.episodes).padStart(8),
    String(run.storedTurns).padStart(7),
    fmt(perSecond, 9, 0),
    fmt(run.roundTrips / run.storedTurns, 11, 2),
    fmt(run.ceiling, 24, 0),
    fmt(perSecond / run.ceiling, 6, 2),
    `  ${countCheck(run)}`,
  ].join(' ');
}
