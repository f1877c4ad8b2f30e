// Phase 1: the model directory (created once, `edgerl model init`'s work), the local inference
// endpoint and the edge app in Node, both on local ports (0: free ones), sharing the demo's one
// Store. Leaves out training: the trainer sessions open their own copy of the model.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import type { Store } from '../../db/store.ts';
import { type RunningEdge, startEdge } from '../../edge/runtime/node.ts';
import { initModelDir } from '../../model/init-model-dir.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import type { DemoConfig, DemoPaths } from './demo-config.ts';
import { EdgeClient } from './edge-client.ts';

export interface DemoServices {
  readonly inference: ServingModel;
  readonly edge: RunningEdge;
  readonly client: EdgeClient;
  /** The inference endpoint's OpenAI base URL (…/v1). */
  readonly inferenceUrl: string;
  /** Whether the model directory was created by this run (false: reused). */
  readonly modelCreated: boolean;
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
  const inference = await serveModel({
    modelDir: paths.model,
    adaptersDir: paths.adapters,
    port: config.inferencePort,
    ...(config.backend ? { backend: config.backend } : {}),
    log,
  });
  const inferenceUrl = `${inference.url}/v1`;
  log(`inference endpoint (vLLM-compatible) at ${inferenceUrl}`);
  // A per-run key: the edge always wants one, and nothing outside this process needs it.
  const apiKey = randomBytes(16).toString('hex');
  let edge: RunningEdge;
  try {
    edge = await startEdge({
      config: {
        upstream: { baseUrl: inferenceUrl, requestTokenIds: true, timeoutMs: policyTimeoutMs },
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
    await inference.close();
    throw error;
  }
  log(
    `edge app (Hono on Node) at ${edge.url}${edge.resumed > 0 ? `, resuming ${edge.resumed} episode(s)` : ''}`,
  );
  return {
    inference,
    edge,
    client: new EdgeClient(edge.url, apiKey),
    inferenceUrl,
    modelCreated,
    async close() {
      await edge.close();
      await inference.close();
    },
  };
}
