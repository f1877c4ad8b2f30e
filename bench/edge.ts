// `npm run bench:edge`: what the edge costs, beside baselines measured in the same run.
// 1. Latency the edge adds per turn: the recording proxy's round trip (auth, history check, the
//    appends, the forwarded call) minus a direct call to the same inference endpoint, paired call by
//    call, median and p95. Conversations grow to 5 calls (≈ 11 turns) before a new trajectory starts.
// 2. Sustained turns per second with 1, 8 and 64 episodes running at once (POST /v1/rollouts of
//    multi-hop groups, episodes in the Node edge's in-process queue), beside the store's own ceiling:
//    bare `appendTurn` calls per second with as many concurrent writers. A count check compares the
//    turns the episode loop reported written with the rows the store holds.
// The inference endpoint is the test double (a perfect multi-hop agent that answers at once) in a
// child process, so the figures are the edge's and the store's, not a model's. Store: embedded PGlite
// in memory, or DATABASE_URL. It reports; it asserts nothing.
import { fork } from 'node:child_process';
import { count, inArray } from 'drizzle-orm';
import { openStore } from '../db/drivers/open-store.ts';
import { turns } from '../db/schema/turns.ts';
import { storeConfigFromEnv } from '../db/drivers/store-config.ts';
import type { Store } from '../db/store.ts';
import { startEdge } from '../edge/runtime/node.ts';
import { startInferenceDouble } from '../test/edge/support/inference-double.ts';

const apiKey = 'bench-key';
/** Paired proxy / direct calls for the latency figure. */
const latencyCalls = 300;
const concurrencies = [1, 8, 64] as const;
/** Episodes per throughput run: enough for the queue to stay full for a while. */
const episodesFor = (concurrency: number) => Math.max(24, 3 * concurrency);

if (process.argv[2] === '--double') {
  // Child process: the inference double, its URL sent to the parent.
  const double = await startInferenceDouble();
  process.send?.(double.baseUrl);
  process.on('disconnect', () => void double.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['--double'], { execArgv: process.execArgv });
  const inferenceUrl = await new Promise<string>((resolve) =>
    child.once('message', (url) => resolve(String(url))),
  );
  const config = storeConfigFromEnv(process.env);
  const store = await openStore({
    url: config.url ?? 'memory://',
    migrations: config.url ? 'check' : 'apply',
  });
  process.stdout.write(
    `edgerl bench:edge — store ${store.target} (${store.driver}), inference double at ${inferenceUrl}\n\n`,
  );
  try {
    await latency(store, inferenceUrl);
    process.stdout.write('\n');
    await throughput(store, inferenceUrl);
  } finally {
    await store.close();
    child.disconnect();
  }
}

function edgeConfig(inferenceUrl: string, concurrency: number) {
  return {
    upstream: { baseUrl: inferenceUrl, requestTokenIds: true, timeoutMs: 60_000 },
    apiKeys: [apiKey],
    defaultModel: 'bench',
    episodeConcurrency: concurrency,
    policyTimeoutMs: 60_000,
  };
}

async function latency(store: Store, inferenceUrl: string): Promise<void> {
  const edge = await startEdge({
    config: edgeConfig(inferenceUrl, 1),
    port: 0,
    store,
    resumeUnfinished: false,
  });
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const post = async (url: string, body: unknown, extra: Record<string, string> = {}) => {
    const started = performance.now();
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, ...extra },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { choices?: { message: Record<string, unknown> }[] };
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${JSON.stringify(json)}`);
    return { ms: performance.now() - started, message: json.choices?.[0]?.message };
  };
  const direct: number[] = [];
  const proxied: number[] = [];
  const added: number[] = [];
  try {
    let trajectory = '';
    let messages: Record<string, unknown>[] = [];
    for (let call = 0; call < latencyCalls + 20; call++) {
      if (call % 5 === 0) {
        const created = await fetch(`${edge.url}/v1/trajectories`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ env: 'bench-agent' }),
        });
        trajectory = ((await created.json()) as { trajectory: { id: string } }).trajectory.id;
        messages = [
          { role: 'system', content: 'You are a helpful agent.' },
          { role: 'user', content: `Request ${call}: say ok.` },
        ];
      }
      const body = { model: 'bench', messages };
      // Alternate which goes first, so drift in machine load hits both alike.
      const first = call % 2 === 0;
      const a = first ? await post(`${inferenceUrl}/chat/completions`, body) : undefined;
      const viaEdge = await post(`${edge.url}/v1/chat/completions`, body, {
        'x-edgerl-trajectory': trajectory,
      });
      const b = a ?? (await post(`${inferenceUrl}/chat/completions`, body));
      messages = [
        ...messages,
        viaEdge.message as Record<string, unknown>,
        { role: 'user', content: `Next ${call}.` },
      ];
      if (call < 20) continue; // warm-up: JIT, connection pools, PGlite caches
      direct.push(b.ms);
      proxied.push(viaEdge.ms);
      added.push(viaEdge.ms - b.ms);
    }
  } finally {
    await edge.close();
  }
  process.stdout.write(`latency per turn, ${latencyCalls} paired calls (ms)   median     p95\n`);
  process.stdout.write(
    `  direct to the inference endpoint (baseline)  ${fmt(quantile(direct, 0.5))}  ${fmt(quantile(direct, 0.95))}\n`,
  );
  process.stdout.write(
    `  through the edge's recording proxy           ${fmt(quantile(proxied, 0.5))}  ${fmt(quantile(proxied, 0.95))}\n`,
  );
  process.stdout.write(
    `  added by the edge (paired difference)        ${fmt(quantile(added, 0.5))}  ${fmt(quantile(added, 0.95))}\n`,
  );
}

async function throughput(store: Store, inferenceUrl: string): Promise<void> {
  process.stdout.write(
    'sustained throughput     episodes   turns   turns/s   store ceiling appends/s   ratio   count check\n',
  );
  for (const concurrency of concurrencies) {
    const episodes = episodesFor(concurrency);
    let reported = 0;
    const edge = await startEdge({
      config: edgeConfig(inferenceUrl, concurrency),
      port: 0,
      store,
      resumeUnfinished: false,
      onEpisodeEvent: (event) => {
        if (event.type === 'turn-end') reported += 1;
      },
    });
    const trajectoryIds: string[] = [];
    let seconds: number;
    try {
      const started = performance.now();
      // Groups of up to 8, as GRPO would ask for them.
      for (let left = episodes; left > 0; left -= 8) {
        const response = await fetch(`${edge.url}/v1/rollouts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ env: 'multi-hop', groupSize: Math.min(8, left) }),
        });
        trajectoryIds.push(...((await response.json()) as { trajectoryIds: string[] }).trajectoryIds);
      }
      await edge.queue.idle();
      seconds = (performance.now() - started) / 1000;
    } finally {
      await edge.close();
    }
    const [stored] = await store.db
      .select({ total: count() })
      .from(turns)
      .where(inArray(turns.trajectoryId, trajectoryIds));
    const rows = stored?.total ?? 0;
    const ceiling = await storeCeiling(store, concurrency);
    const check =
      rows === reported ? `ok (${rows} = ${reported})` : `MISMATCH: ${rows} stored, ${reported} sent`;
    process.stdout.write(
      `  ${String(concurrency).padStart(2)} concurrent        ${String(episodes).padStart(8)}  ${String(rows).padStart(6)}  ${fmt(rows / seconds, 8, 0)}  ${fmt(ceiling, 24, 0)}  ${fmt(rows / seconds / ceiling, 6, 2)}   ${check}\n`,
    );
  }
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

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
}

function fmt(value: number, width = 7, digits = 2): string {
  return value.toFixed(digits).padStart(width);
}
