// `npm run bench:store`: sustained turn appends per second with 1, 8 and 32 concurrent writers (each
// appending to its own trajectory, one appendTurn per turn, as the edge does), beside two baselines
// measured in the same run on the same database with the same writers and rows: a plain single-row
// INSERT per turn (the floor of any unbatched append: one statement, no check, no counter) and a
// plain multi-row INSERT. Ratios are appends/s ÷ baseline rows/s. It reports; it asserts nothing.
// Database: DATABASE_URL when set (migrated beforehand with `edgerl db migrate`; the rows the bench
// writes are deleted afterwards), else an embedded PGlite store in a temporary directory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TurnInput } from '../protocol/turn.ts';
import { inArray } from 'drizzle-orm';
import { openStore } from '../db/drivers/open-store.ts';
import { trajectories } from '../db/schema/trajectories.ts';
import { turns } from '../db/schema/turns.ts';
import { storeConfigFromEnv } from '../db/drivers/store-config.ts';
import type { Store } from '../db/store.ts';
import { toTurnRow } from '../db/store/turn-row.ts';

/** How long each writer count appends, in seconds (long enough for a few hundred appends on PGlite). */
const appendSeconds = 3;
const writerCounts = [1, 8, 32] as const;
/** Rows per INSERT statement in the baseline (15 columns × 500 rows stays far below Postgres's 65,535 parameters). */
const baselineBatch = 500;

/** Turn `index` of a synthetic episode: user and assistant alternate; assistant turns carry 64 tokens. */
function syntheticTurn(trajectoryId: string, index: number): TurnInput {
  if (index % 2 === 0)
    return { trajectoryId, index, role: 'user', content: `Question ${index}: what is ${index} + ${index}?` };
  const ids = Array.from({ length: 64 }, (_, token) => (index * 7919 + token * 104729) % 151643);
  return {
    trajectoryId,
    index,
    role: 'assistant',
    content: `The answer is ${2 * index}. `.repeat(8),
    completionTokenIds: ids,
    completionLogprobs: ids.map((id) => -((id % 1000) / 997)),
    promptTokenCount: 40 * index,
    servedBy: 'agent@0',
    latencyMs: 25,
  };
}

async function measureAppends(store: Store, writers: number, ids: string[]): Promise<number[]> {
  const deadline = performance.now() + appendSeconds * 1000;
  return Promise.all(
    Array.from({ length: writers }, async (_, writer) => {
      const trajectoryId = ids[writer] as string;
      let index = 0;
      while (performance.now() < deadline) {
        await store.appendTurn(syntheticTurn(trajectoryId, index));
        index += 1;
      }
      return index;
    }),
  );
}

async function measureBaseline(store: Store, counts: number[], ids: string[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    counts.map(async (count, writer) => {
      const trajectoryId = ids[writer] as string;
      const rows = Array.from({ length: count }, (_, index) =>
        toTurnRow({ schemaVersion: 1, ...syntheticTurn(trajectoryId, index) } as never),
      );
      for (let start = 0; start < rows.length; start += baselineBatch) {
        await store.db.insert(turns).values(rows.slice(start, start + baselineBatch));
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Each writer inserts its rows one INSERT statement per row, autocommitted. */
async function measureSingleRow(store: Store, counts: number[], ids: string[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    counts.map(async (count, writer) => {
      const trajectoryId = ids[writer] as string;
      for (let index = 0; index < count; index += 1) {
        await store.db
          .insert(turns)
          .values(toTurnRow({ schemaVersion: 1, ...syntheticTurn(trajectoryId, index) } as never));
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

async function startTrajectories(store: Store, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let slot = 0; slot < count; slot += 1)
    ids.push((await store.startTrajectory({ env: 'bench-store' })).id);
  return ids;
}

async function main(): Promise<void> {
  const config = storeConfigFromEnv(process.env);
  const scratch = config.url ? undefined : await mkdtemp(join(tmpdir(), 'edgerl-bench-store-'));
  const store = await openStore({
    url: config.url,
    dataDir: scratch ? join(scratch, 'pgdata') : config.dataDir,
    maxConnections: Math.max(...writerCounts) + 4,
  });
  const created: string[] = [];
  try {
    console.log(`bench:store on ${store.driver} (${store.target}); ${appendSeconds} s of appends per row`);
    console.log('baselines: the same rows as plain INSERTs (no lock, check or counter), same writers:');
    console.log('single = one row per INSERT, multi = multi-row INSERTs of up to 500 rows\n');
    console.log('writers  appends/s  single rows/s  ratio  multi rows/s   ratio');
    for (const writers of writerCounts) {
      const appendIds = await startTrajectories(store, writers);
      const baselineIds = await startTrajectories(store, writers);
      const singleIds = await startTrajectories(store, writers);
      created.push(...appendIds, ...baselineIds, ...singleIds);
      const counts = await measureAppends(store, writers, appendIds);
      const appended = counts.reduce((sum, count) => sum + count, 0);
      const appendsPerSecond = appended / appendSeconds;
      const baselineSeconds = await measureBaseline(store, counts, baselineIds);
      const baselinePerSecond = appended / baselineSeconds;
      const singlePerSecond = appended / (await measureSingleRow(store, counts, singleIds));
      const columns = [
        String(writers).padStart(7),
        appendsPerSecond.toFixed(0).padStart(9),
        singlePerSecond.toFixed(0).padStart(13),
        (appendsPerSecond / singlePerSecond).toFixed(2).padStart(5),
        baselinePerSecond.toFixed(0).padStart(12),
        (appendsPerSecond / baselinePerSecond).toFixed(3).padStart(7),
      ];
      console.log(columns.join('  '));
    }
    if (store.driver === 'pglite') {
      console.log('\nPGlite is one backend: writers take turns, so more writers add no throughput there.');
    }
  } finally {
    if (config.url && created.length > 0)
      await store.db.delete(trajectories).where(inArray(trajectories.id, created));
    await store.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

await main();
