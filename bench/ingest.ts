// `npm run bench:ingest`: whole recorded episodes stored per second through ingestTrajectories (one
// transaction per batch of episodes, with the idempotency key, the checks and the escaping), beside a
// baseline measured in the same run on the same database: the same trajectory and turn rows as plain
// multi-row INSERTs (no transaction, key or check), with the same number of writers. The ratio is
// ingest turns/s ÷ baseline turns/s (issue 17's goal: at least 0.5). It reports; it asserts nothing.
// Database: DATABASE_URL when set (migrated beforehand with `edgerl db migrate`; the rows the bench
// writes are deleted afterwards), else an embedded PGlite store in a temporary directory.
// Sizes: BENCH_EPISODES (default 400) episodes of BENCH_TURNS (default 20) turns, BENCH_BATCH (default 50) per call.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inArray, like } from 'drizzle-orm';
import { openStore } from '../db/drivers/open-store.ts';
import { storeConfigFromEnv } from '../db/drivers/store-config.ts';
import { trajectories } from '../db/schema/trajectories.ts';
import { turns } from '../db/schema/turns.ts';
import type { IngestEpisodeInput, Store } from '../db/store.ts';
import { toTurnRow } from '../db/store/turn-row.ts';
import type { Turn } from '../protocol/turn.ts';

const episodeCount = Number(process.env.BENCH_EPISODES ?? 400);
const turnsPerEpisode = Number(process.env.BENCH_TURNS ?? 20);
const batchSize = Number(process.env.BENCH_BATCH ?? 50);
const writerCounts = [1, 8] as const;
/** Rows per baseline INSERT (15 columns × 500 rows stays far below Postgres's 65,535 parameters). */
const baselineRows = 500;

/** Turn `index` of a synthetic episode: user and assistant alternate; assistant turns carry 64 tokens (as bench:store). */
function syntheticTurn(index: number): IngestEpisodeInput['turns'][number] {
  if (index % 2 === 0) return { role: 'user', content: `Question ${index}: what is ${index} + ${index}?` };
  const ids = Array.from({ length: 64 }, (_, token) => (index * 7919 + token * 104729) % 151643);
  return {
    role: 'assistant',
    content: `The answer is ${2 * index}. `.repeat(8),
    completionTokenIds: ids,
    completionLogprobs: ids.map((id) => -((id % 1000) / 997)),
    promptTokenCount: 40 * index,
    servedBy: 'agent@0',
    latencyMs: 25,
  };
}

function syntheticEpisode(run: string, slot: number): IngestEpisodeInput {
  return {
    key: `bench-ingest:${run}:${slot}`,
    env: 'bench-ingest',
    verifierReward: (slot % 10) / 10,
    metadata: { slot },
    turns: Array.from({ length: turnsPerEpisode }, (_, index) => syntheticTurn(index)),
  };
}

/** `writers` concurrent uploaders, each ingesting its share of the episodes in batches; seconds taken. */
async function measureIngest(store: Store, writers: number, episodes: IngestEpisodeInput[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    shares(episodes, writers).map(async (share) => {
      for (let start = 0; start < share.length; start += batchSize)
        await store.ingestTrajectories({ episodes: share.slice(start, start + batchSize) });
    }),
  );
  return (performance.now() - started) / 1000;
}

/** The same rows as plain multi-row INSERTs: trajectories, then their turns, per batch; seconds taken. */
async function measureBaseline(
  store: Store,
  writers: number,
  episodes: IngestEpisodeInput[],
): Promise<number> {
  const prepared = shares(episodes, writers).map((share) =>
    batches(share).map((batch) => {
      const rows = batch.map((episode) => ({ id: randomUUID(), episode }));
      return {
        trajectoryRows: rows.map(({ id, episode }) => ({
          id,
          env: 'bench-ingest-baseline',
          status: 'finished' as const,
          verifierReward: episode.verifierReward ?? null,
          turnCount: episode.turns.length,
          metadata: episode.metadata ?? {},
        })),
        turnRows: rows.flatMap(({ id, episode }) =>
          episode.turns.map((turn, index) =>
            toTurnRow({ schemaVersion: 1, ...turn, trajectoryId: id, index } as Turn),
          ),
        ),
      };
    }),
  );
  const started = performance.now();
  await Promise.all(
    prepared.map(async (share) => {
      for (const { trajectoryRows, turnRows } of share) {
        await store.db.insert(trajectories).values(trajectoryRows);
        for (let start = 0; start < turnRows.length; start += baselineRows)
          await store.db.insert(turns).values(turnRows.slice(start, start + baselineRows));
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

function shares<T>(items: readonly T[], count: number): T[][] {
  return Array.from({ length: count }, (_, writer) => items.filter((_, index) => index % count === writer));
}

function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += batchSize)
    out.push(items.slice(start, start + batchSize));
  return out;
}

async function main(): Promise<void> {
  const config = storeConfigFromEnv(process.env);
  const scratch = config.url ? undefined : await mkdtemp(join(tmpdir(), 'edgerl-bench-ingest-'));
  const store = await openStore({
    url: config.url,
    dataDir: scratch ? join(scratch, 'pgdata') : config.dataDir,
    maxConnections: Math.max(...writerCounts) + 4,
  });
  const run = randomUUID();
  try {
    console.log(
      `bench:ingest on ${store.driver} (${store.target}); ${episodeCount} episodes of ${turnsPerEpisode} turns, ${batchSize} per call`,
    );
    console.log(
      'baseline: the same rows as plain multi-row INSERTs (no transaction, key or check), same writers\n',
    );
    console.log('writers  episodes/s    turns/s  baseline turns/s   ratio');
    for (const writers of writerCounts) {
      const episodes = Array.from({ length: episodeCount }, (_, slot) =>
        syntheticEpisode(`${run}:${writers}`, slot),
      );
      const ingestSeconds = await measureIngest(store, writers, episodes);
      const baselineSeconds = await measureBaseline(store, writers, episodes);
      const turnsTotal = episodeCount * turnsPerEpisode;
      const turnsPerSecond = turnsTotal / ingestSeconds;
      const baselinePerSecond = turnsTotal / baselineSeconds;
      console.log(
        `${String(writers).padStart(7)}  ${(episodeCount / ingestSeconds).toFixed(0).padStart(10)}  ${turnsPerSecond.toFixed(0).padStart(9)}  ${baselinePerSecond.toFixed(0).padStart(16)}  ${(turnsPerSecond / baselinePerSecond).toFixed(3).padStart(6)}`,
      );
    }
    if (store.driver === 'pglite') {
      console.log('\nPGlite is one backend: writers take turns, so more writers add no throughput there.');
    }
  } finally {
    if (config.url) {
      await store.db.delete(trajectories).where(like(trajectories.ingestKey, `bench-ingest:${run}:%`));
      await store.db.delete(trajectories).where(inArray(trajectories.env, ['bench-ingest-baseline']));
    }
    await store.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

await main();
