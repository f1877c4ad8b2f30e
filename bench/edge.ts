// `npm run bench:edge`: what the edge costs, beside baselines measured in the same run.
// 1. Latency the edge adds per turn (bench/edge-latency.ts): the recording proxy's round trip (auth,
//    history check, the appends, the forwarded call) minus a direct call to the same inference
//    endpoint, paired call by call, median / p90 / p95; and the store round trips per turn it spends.
// 2. Sustained turns per second with 1, 8, 64 (and on a server 1,000) episodes running at once
//    (bench/edge-throughput.ts), beside the store's bare appendTurn ceiling, with round trips per turn
//    and the count check (turns the episodes counted, reported and stored; every episode finished);
//    then each run's round trips per turn by statement (claim, append, finish, group start, …).
// The inference endpoint is the test double (a perfect multi-hop agent that answers at once) in a
// child process, so the figures are the edge's and the store's, not a model's. The store's driver
// counts its statements (test/support/counting-store.ts). Store: in-memory PGlite, or DATABASE_URL
// (migrated beforehand with `edgerl db migrate`). It reports; it asserts nothing.
//   EDGERL_BENCH_CONCURRENCY  comma-separated episode counts at once (default 1,8,64 and 1000 on a server)
//   EDGERL_BENCH_CALLS        paired latency calls (default 300)
//   EDGERL_BENCH_POOL         the server pool's connections (default 32)
import { fork } from 'node:child_process';
import { storeConfigFromEnv } from '../db/drivers/store-config.ts';
import { openCountingStoreAt } from '../test/support/counting-store.ts';
import { startInferenceDouble } from '../test/edge/support/inference-double.ts';
import { measureLatency, printLatency } from './edge-latency.ts';
import { measureThroughput, statementLines, throughputHeader, throughputLine } from './edge-throughput.ts';

/** Episodes per throughput run: enough for the queue to stay full for a while; 1,000 at once is one wave. */
const episodesFor = (concurrency: number) =>
  concurrency >= 1000 ? concurrency : Math.max(24, 3 * concurrency);

function positiveInts(text: string | undefined, name: string): number[] | undefined {
  if (!text) return undefined;
  const values = text.split(',').map((part) => Number(part.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 1))
    throw new Error(`${name} must be comma-separated positive integers, got "${text}"`);
  return values;
}

if (process.argv[2] === '--double') {
  // Child process: the inference double, its URL sent to the parent.
  const double = await startInferenceDouble();
  process.send?.(double.baseUrl);
  process.on('disconnect', () => void double.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
  const config = storeConfigFromEnv(process.env);
  const [calls] = positiveInts(process.env.EDGERL_BENCH_CALLS, 'EDGERL_BENCH_CALLS') ?? [300];
  const [pool] = positiveInts(process.env.EDGERL_BENCH_POOL, 'EDGERL_BENCH_POOL') ?? [32];
  const concurrencies =
    positiveInts(process.env.EDGERL_BENCH_CONCURRENCY, 'EDGERL_BENCH_CONCURRENCY') ??
    (config.url ? [1, 8, 64, 1000] : [1, 8, 64]);
  const child = fork(new URL(import.meta.url).pathname, ['--double'], { execArgv: process.execArgv });
  const inferenceUrl = await new Promise<string>((resolve) =>
    child.once('message', (url) => resolve(String(url))),
  );
  const counting = await openCountingStoreAt({
    ...(config.url ? { url: config.url, migrations: 'check' as const } : {}),
    maxConnections: pool,
  });
  const { store } = counting;
  const write = (line: string) => process.stdout.write(`${line}\n`);
  write(`edgerl bench:edge — store ${store.target} (${store.driver}${config.url ? `, pool ${pool}` : ''}),`);
  write(`inference double at ${inferenceUrl}\n`);
  try {
    printLatency(await measureLatency(counting, inferenceUrl, calls as number), write);
    write('');
    write(throughputHeader);
    const runs = [];
    for (const concurrency of concurrencies) {
      const run = await measureThroughput(counting, inferenceUrl, concurrency, episodesFor(concurrency));
      write(throughputLine(run));
      runs.push(run);
    }
    for (const run of runs) {
      write(`\nround trips per stored turn by statement, ${run.concurrency} concurrent:`);
      for (const line of statementLines(run)) write(line);
    }
  } finally {
    await counting.close();
    child.disconnect();
  }
}
