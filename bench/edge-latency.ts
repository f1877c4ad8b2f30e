// bench:edge, part 1: the latency the recording proxy adds per turn and the store round trips it
// spends. Each call goes to the inference double directly (the baseline) and through the edge, in
// alternating order so drift in machine load hits both alike; the figure is the paired difference.
// Conversations grow to 5 calls (≈ 11 turns) before a new trajectory starts. The counting store's
// counter is read around each proxied call alone, and the calls run one at a time, so every trip it
// counts belongs to that call. A second baseline, timed in the same loop: one autocommitted
// single-row INSERT of a turn on the same store, the floor of any durable write (on a server, one
// WAL flush: what the proxy's one append per call cannot go below).
import { count, inArray } from 'drizzle-orm';
import { turns } from '../db/schema/turns.ts';
import { toTurnRow } from '../db/store/turn-row.ts';
import { startEdge } from '../edge/runtime/node.ts';
import type { CountingStore } from '../test/support/counting-store.ts';
import { fmt } from './bench-format.ts';
import { benchApiKey, benchEdgeConfig } from './edge-bench-config.ts';
import { quantile } from './quantile.ts';

/** Calls before measuring: JIT, connection pools, PGlite caches. */
const warmUpCalls = 20;
const callsPerTrajectory = 5;

export interface LatencyFigures {
  readonly directMs: readonly number[];
  readonly proxiedMs: readonly number[];
  readonly addedMs: readonly number[];
  /** One single-row INSERT of a turn per call, autocommitted (the store's floor per durable write). */
  readonly insertMs: readonly number[];
  /** Round trips of every proxied call (warm-up included) and the turns those calls stored. */
  readonly roundTrips: number;
  readonly proxiedCalls: number;
  readonly storedTurns: number;
}

type Message = Record<string, unknown>;

export async function measureLatency(
  counting: CountingStore,
  inferenceUrl: string,
  calls: number,
): Promise<LatencyFigures> {
  const { store } = counting;
  const edge = await startEdge({
    config: benchEdgeConfig(inferenceUrl, 1),
    port: 0,
    store,
    resumeUnfinished: false,
  });
  const headers = { authorization: `Bearer ${benchApiKey}`, 'content-type': 'application/json' };
  const post = async (url: string, body: unknown, extra: Record<string, string> = {}) => {
    const started = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, ...extra },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { choices?: { message: Message }[] };
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${JSON.stringify(json)}`);
    return { ms: performance.now() - started, message: json.choices?.[0]?.message };
  };
  const directMs: number[] = [];
  const proxiedMs: number[] = [];
  const addedMs: number[] = [];
  const insertMs: number[] = [];
  const trajectoryIds: string[] = [];
  // Its rows are not the proxy's: kept out of the turns counted per call.
  const floor = await store.startTrajectory({ env: 'bench-floor' });
  const insertTurn = async (index: number) => {
    const row = toTurnRow({ schemaVersion: 1, trajectoryId: floor.id, index, role: 'user', content: 'ok' });
    const started = performance.now();
    await store.db.insert(turns).values(row);
    return performance.now() - started;
  };
  let roundTrips = 0;
  try {
    let trajectory = '';
    let messages: Message[] = [];
    for (let call = 0; call < calls + warmUpCalls; call++) {
      if (call % callsPerTrajectory === 0) {
        const created = await fetch(`${edge.url}/v1/trajectories`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ env: 'bench-agent' }),
        });
        trajectory = ((await created.json()) as { trajectory: { id: string } }).trajectory.id;
        trajectoryIds.push(trajectory);
        messages = [
          { role: 'system', content: 'You are a helpful agent.' },
          { role: 'user', content: `Request ${call}: say ok.` },
        ];
      }
      const body = { model: 'bench', messages };
      const first = call % 2 === 0;
      const a = first ? await post(`${inferenceUrl}/chat/completions`, body) : undefined;
      counting.reset();
      const viaEdge = await post(`${edge.url}/v1/chat/completions`, body, {
        'x-edgerl-trajectory': trajectory,
      });
      roundTrips += counting.roundTrips();
      const b = a ?? (await post(`${inferenceUrl}/chat/completions`, body));
      const inserted = await insertTurn(call);
      messages = [...messages, viaEdge.message as Message, { role: 'user', content: `Next ${call}.` }];
      if (call < warmUpCalls) continue;
      insertMs.push(inserted);
      directMs.push(b.ms);
      proxiedMs.push(viaEdge.ms);
      addedMs.push(viaEdge.ms - b.ms);
    }
  } finally {
    await edge.close();
  }
  const [stored] = await store.db
    .select({ total: count() })
    .from(turns)
    .where(inArray(turns.trajectoryId, trajectoryIds));
  return {
    directMs,
    proxiedMs,
    addedMs,
    insertMs,
    roundTrips,
    proxiedCalls: calls + warmUpCalls,
    storedTurns: stored?.total ?? 0,
  };
}

export function printLatency(figures: LatencyFigures, write: (line: string) => void): void {
  const row = (label: string, values: readonly number[]) =>
    write(
      `  ${label.padEnd(44)} ${fmt(quantile(values, 0.5))} ${fmt(quantile(values, 0.9))} ${fmt(quantile(values, 0.95))}`,
    );
  write(`latency per turn, ${figures.addedMs.length} paired calls (ms)          median     p90     p95`);
  row('direct to the inference endpoint (baseline)', figures.directMs);
  row("through the edge's recording proxy", figures.proxiedMs);
  row('added by the edge (paired difference)', figures.addedMs);
  row('one single-row INSERT on the store (floor)', figures.insertMs);
  const perCall = figures.roundTrips / figures.proxiedCalls;
  const turnsPerCall = figures.storedTurns / figures.proxiedCalls;
  write(
    `  store round trips: ${fmt(perCall, 0, 2)} per proxied call, ${fmt(turnsPerCall, 0, 2)} turns stored per call,` +
      ` ${fmt(figures.roundTrips / figures.storedTurns, 0, 2)} per turn (target 1)`,
  );
}
