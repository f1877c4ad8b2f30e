// bench:serve's decode-worker section: the same model served three ways in one process — in the main
// thread (--workers 0), by 1 decode worker thread and by N (one per core) — with the demo's kind of
// adapter loaded (LoRA on all seven projections, rank --adapter-rank, default the demo's 64, B random
// so it is not a no-op), and groups of 1, 8, 16 and 64 concurrent requests on it (the demo's RL round
// is 8 groups of 8 behind an edge that runs 16 episodes at once): decode tokens/s on short prompts,
// then completion tokens/s over the whole group on prompts as long as an episode's later turns
// (there prefill, which the workers split too, costs as much as decoding). The servers take turns
// batch by batch within each repeat, so load on the machine falls on all of them alike. Reports,
// does not assert.
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
  /** Filler words for the long-prompt table (an RL episode's later turns). */
  readonly padding: number;
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

  const cores = Math.max(2, availableParallelism());
  // The main thread, 1 worker, one per core as the default fills them, and one per core spreading
  // every batch (--worker-fill-rows 0, not a flag: serveModel's workerFillRows).
  const setups = [
    { label: 'main thread', workers: 0 },
    { label: '1 worker', workers: 1 },
    { label: `${cores} workers`, workers: cores },
    { label: `${cores} spread`, workers: cores, workerFillRows: 0 },
  ];
  const servers: ServingModel[] = [];
  try {
    for (const { label: _, ...setup } of setups) {
      servers.push(
        await serveModel({
          modelDir: options.modelDir,
          adaptersDir,
          port: 0,
          servedModelName: 'bench',
          ...setup,
          backend: options.backend,
          log: () => {},
        }),
      );
    }
    const largest = Math.max(...options.batches);
    const run = (serving: ServingModel, size: number, round: number, padding: number) =>
      timeGroup(serving, {
        model: adapterName,
        size,
        round,
        tokens: options.tokens,
        extra: { ignore_eos: true },
        padding,
      });
    for (const serving of servers) await run(serving, largest, 99, options.padding); // warm-up
    const shapes = [
      { padding: 0, metric: 'decodeTokensPerSecond' as const },
      { padding: options.padding, metric: 'tokensPerSecond' as const },
    ];
    // figures[shape][server][batch]: one GroupFigures per repeat.
    const figures = shapes.map(() => setups.map(() => options.batches.map((): GroupFigures[] => [])));
    const loads: number[] = [];
    for (let round = 0; round < options.repeats; round++) {
      for (const [k, shape] of shapes.entries()) {
        for (const [b, size] of options.batches.entries()) {
          for (const [s, serving] of servers.entries()) {
            figures[k]?.[s]?.[b]?.push(await run(serving, size, round, shape.padding));
          }
        }
      }
      loads.push(loadavg()[0] as number);
    }
    console.log(
      `\ndecode workers (serve-model --workers) on a rank-${r} adapter on all projections, ` +
        `${options.tokens} tokens per request, median of ${options.repeats}; ${cores} cores, ` +
        `1-minute load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
    );
    for (const [k, shape] of shapes.entries()) {
      const list = (s: number, b: number) => figures[k]?.[s]?.[b] ?? [];
      const rate = (s: number, b: number) => median(list(s, b).map((figure) => figure[shape.metric]));
      const prompt = median(list(0, 0).map((figure) => figure.promptTokens));
      console.log(
        shape.metric === 'decodeTokensPerSecond'
          ? `decode tokens/s, ${prompt.toFixed(0)}-token prompts:`
          : `completion tokens/s over the whole group (prefill included), ${prompt.toFixed(0)}-token prompts:`,
      );
      const head = [
        'concurrent',
        ...setups.map((setup) => setup.label),
        '1 vs main',
        `${cores} vs main`,
        `${cores} vs 1`,
      ];
      const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
      const table = [
        head,
        ...options.batches.map((size, b) => [
          String(size),
          ...setups.map((_, s) => rate(s, b).toFixed(0)),
          ratio(rate(1, b), rate(0, b)),
          ratio(rate(2, b), rate(0, b)),
          ratio(rate(2, b), rate(1, b)),
        ]),
      ];
      const widths = head.map((_, column) => Math.max(...table.map((row) => (row[column] as string).length)));
      for (const row of table) {
        console.log(row.map((cell, column) => cell.padStart(widths[column] as number)).join('  '));
      }
    }
  } finally {
    await Promise.all(servers.map((serving) => serving.close()));
  }
}
