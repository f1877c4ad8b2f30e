// Phase 1: the model directory (created once, `edgerl model init`'s work), the local inference
// endpoint (`--replicas` of it: a fleet the edge routes over) and the edge app in Node, all on local
// ports (0: free ones), sharing the demo's one Store. Leaves out training: the trainer sessions open
// their own copy of the model.
import { defaultFleetChecks } from '../../trainer/train/inference-endpoint.ts';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import type { Store } from '../../db/store.ts';
import { type RunningEdge, startEdge } from '../../edge/runtime/node.ts';
import { initModelDir } from '../../model/init-model-dir.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import type { DemoConfig } from './demo-config.ts';
import type { DemoPaths } from './demo-paths.ts';
import { catchUpFleet, describeCatchUp } from '../../trainer/train/catch-up-fleet.ts';
import { EdgeClient } from './edge-client.ts';
import { demoPolicyName } from './trainer-config.ts';

export interface DemoServices {
  /** The inference endpoint's replicas (`--replicas`, one by default). */
  readonly inference: readonly ServingModel[];
  readonly edge: RunningEdge;
  readonly client: EdgeClient;
  /** Each replica's OpenAI base URL (…/v1), in order. */
  readonly inferenceUrls: readonly string[];
  /** Whether the model directory was created by this run (false: reused). */
  readonly modelCreated: boolean;
  /**
   * Brings every replica to what the store routes now (trainer/train/catch-up-fleet.ts): loads what is
   * routable and missing, unloads the rest. At start, and after the A/B experiment makes the starting
   * version routable again (retention unloaded it while RL published newer ones).
   */
  catchUp(): Promise<void>;
  close(): Promise<void>;
}

/** One policy call; generous because 2 shared cores may be busy training between rounds. */
const policyTimeoutMs = 120_000;

/**
 * Words every multi-hop episode repeats (the tool, its argument, the two result kinds), given single
 * tokens in the demo model's vocabulary: ~40 fewer tokens an episode (of ~200), and the vocabulary
 * still fits its 576 rows.
 */
export const demoExtraPieces = ['lookup', ' lookup', 'key', ' key', 'next', 'value', ' value'] as const;

export async function startServices(
  config: DemoConfig,
  paths: DemoPaths,
  store: Store,
  log: (line: string) => void,
): Promise<DemoServices> {
  let modelCreated = false;
  if (!existsSync(paths.model)) {
    const { parameters } = await initModelDir(paths.model, {
      preset: config.preset,
      architecture: 'qwen2',
      seed: config.seed,
      dtype: 'F32',
      embeddingStd: config.embeddingStd,
      extraPieces: demoExtraPieces,
    });
    modelCreated = true;
    log(
      `created a ${config.preset} model (${parameters.toLocaleString('en-US')} parameters) in ${paths.model}`,
    );
  } else {
    log(`reusing the model in ${paths.model}`);
  }
  mkdirSync(paths.adapters, { recursive: true });
  // Each replica loads the model and the adapters already published at start; later ones arrive by
  // publication (and by catch-up, below, for those this store knows under other addresses).
  const inference: ServingModel[] = [];
  const closeInference = () => Promise.all(inference.map((replica) => replica.close()));
  // A per-run key: the edge always wants one, and nothing outside this process needs it.
  const apiKey = randomBytes(16).toString('hex');
  let edge: RunningEdge;
  let inferenceUrls: string[];
  try {
    for (let index = 0; index < config.replicas; index++) {
      inference.push(
        await serveModel({
          modelDir: paths.model,
          adaptersDir: paths.adapters,
          port: config.inferencePort === 0 ? 0 : config.inferencePort + index,
          ...(config.backend ? { backend: config.backend } : {}),
          log,
        }),
      );
    }
    inferenceUrls = inference.map((replica) => `${replica.url}/v1`);
    const fleet = inferenceUrls.length > 1;
    log(
      fleet
        ? `inference fleet (vLLM-compatible): ${inferenceUrls.length} replicas at ${inferenceUrls.join(', ')}`
        : `inference endpoint (vLLM-compatible) at ${inferenceUrls[0]}`,
    );
    await catchUpDemoFleet(store, inferenceUrls, config.keepVersions, log);
    edge = await startEdge({
      config: {
        upstream: { baseUrl: inferenceUrls[0] as string, requestTokenIds: true, timeoutMs: policyTimeoutMs },
        ...(fleet ? { fleet: { replicas: inferenceUrls, cacheMs: 1000 } } : {}),
        apiKeys: [apiKey],
        episodeConcurrency: config.concurrency,
        policyTimeoutMs,
      },
      port: config.edgePort,
      store,
      // Each RL round routes to the version the trainer published a moment before, in this process:
      // no route table, so it never waits out the table's bound (edge/routing/route-cache.ts).
      routeCacheMs: 0,
      log: (line) => log(`edge: ${line}`),
    });
  } catch (error) {
    await closeInference();
    throw error;
  }
  log(
    `edge app (Hono on Node) at ${edge.url}${edge.resumed > 0 ? `, resuming ${edge.resumed} episode(s)` : ''}`,
  );
  // The edge serves the web console too: groups fill in live while the rounds run.
  log(`console, live while the demo runs: ${edge.url}/console (sign in with the key ${apiKey})`);
  return {
    inference,
    edge,
    client: new EdgeClient(edge.url, apiKey),
    inferenceUrls,
    modelCreated,
    catchUp: () => catchUpDemoFleet(store, inferenceUrls, config.keepVersions, log),
    async close() {
      await edge.close();
      await closeInference();
    },
  };
}

/** The demo policy's catch-up over the demo's replicas, its lines logged. */
async function catchUpDemoFleet(
  store: Store,
  replicas: readonly string[],
  keepVersions: number,
  log: (line: string) => void,
): Promise<void> {
  const reports = await catchUpFleet({
    store,
    fleet: {
      replicas: [...replicas],
      timeoutMs: policyTimeoutMs,
      probeTolerance: defaultFleetChecks.probeTolerance,
      keepVersions,
    },
    policyName: demoPolicyName,
  });
  for (const line of describeCatchUp(reports)) log(line);
}
