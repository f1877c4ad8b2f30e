// bench:serve's decode-worker section: the same model served three ways in one process — in the main
// thread (--workers 0), by 1 decode worker thread and by N (one per core) — with the demo's kind of
// adapter loaded (LoRA on all seven projections, rank --adapter-rank, default the demo's 64, B random
// so it is not a no-op), and groups of 1, 8, 16 and 64 concurrent requests on it (the demo's RL round
// is 8 groups of 8 behind an edge that runs 16 episodes at once). The servers take turns batch by
// batch within each repeat, so load on the machine falls on all of them alike. Reports, does not assert.
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { projections } from '../model/hf-config.ts';
import { loadModel } from '../model/policy-model.ts';
import { type ServingModel, serveModel } from '../serve/serve-model.ts';
import { type GroupFigures, median, timeGroup } from './serve-requests.ts';

export interface WorkerComparison {
  readonly modelDir: string;
  /** A scratch directory for the adapter. */
  readonly dir: string;
  readonly tokens: number;
  readonly repeats: number;
  readonly adapterRank: number;
  readonly batches: readonly number[];
  readonly backend: string | undefined;
}

const adapterName = 'bench-lora';

export async function compareWorkers(options: WorkerComparison): Promise<void> {
  const adaptersDir = join(options.dir, 'adapters');
  const model = await loadModel(options.modelDir);
  const r = options.adapterRank;
  model.addAdapter(
    adapterName,
    { r, alpha: 2 * r, targets: projections, initLoraWeights: false },
    { seed: 1 },
  );
  await model.saveAdapter(adapterName, join(adaptersDir, adapterName));
  model.dispose();

  const cores = availableParallelism();
  const counts = [...new Set([0, 1, cores])];
  const servers: ServingModel[] = [];
  try {
    for (const workers of counts) {
      servers.push(
        await serveModel({
          modelDir: options.modelDir,
          adaptersDir,
          port: 0,
          servedModelName: 'bench',
          workers,
          backend: options.backend,
          log: () => {},
        }),
      );
    }
    const largest = Math.max(...options.batches);
    const run = (serving: ServingModel, size: number, round: number) =>
      timeGroup(serving, {
        model: adapterName,
        size,
        round,
        tokens: options.tokens,
        extra: { ignore_eos: true },
      });
    for (const serving of servers) await run(serving, largest, 99); // warm-up
    const figures = counts.map(() => options.batches.map((): GroupFigures[] => []));
    const loads: number[] = [];
    for (let round = 0; round < options.repeats; round++) {
      for (const [b, size] of options.batches.entries()) {
        for (const [s, serving] of servers.entries()) figures[s]?.[b]?.push(await run(serving, size, round));
      }
      loads.push(loadavg()[0] as number);
    }
    const rate = (s: number, b: number) =>
      median((figures[s]?.[b] ?? []).map((figure) => figure.decodeTokensPerSecond));
    const label = (workers: number) =>
      workers === 0 ? 'main thread' : `${workers} worker${workers > 1 ? 's' : ''}`;
    const head = ['concurrent', ...counts.map(label), `${label(cores)} vs main`, `${label(cores)} vs 1`];
    const table = [
      head,
      ...options.batches.map((size, b) => {
        const last = counts.length - 1;
        return [
          String(size),
          ...counts.map((_, s) => rate(s, b).toFixed(0)),
          `${(rate(last, b) / rate(0, b)).toFixed(2)}×`,
          `${(rate(last, b) / rate(counts.indexOf(1), b)).toFixed(2)}×`,
        ];
      }),
    ];
    const widths = head.map((_, column) => Math.max(...table.map((row) => (row[column] as string).length)));
    console.log(
      `\ndecode workers (serve-model --workers), decode tokens/s on a rank-${r} adapter on all projections, ` +
        `${options.tokens} tokens per request, median of ${options.repeats}; ${cores} cores, ` +
        `1-minute load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
    );
    for (const row of table)
      console.log(row.map((cell, column) => cell.padStart(widths[column] as number)).join('  '));
  } finally {
    await Promise.all(servers.map((serving) => serving.close()));
  }
}
