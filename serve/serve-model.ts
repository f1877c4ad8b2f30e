// Starts the local inference endpoint in Node: picks the TensorFlow.js backend, loads the model, its
// tokenizer and the adapters found under `adaptersDir` (each subdirectory with an adapter_config.json,
// served under the folder's name, as vLLM's --lora-modules name=path), and listens with
// @hono/node-server. Port 0 picks a free port; `url` says which. Leaves flag and env parsing to the CLI.
import { Server } from 'node:http';
import { existsSync, readdirSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { serverKeepAliveMs } from '../protocol/keep-alive.ts';
import { selectBackend } from '../model/backend.ts';
import type { BackendChoice } from '../model/backend-names.ts';
import { loadModel, loadModelConfig } from '../model/policy-model.ts';
import { loadTokenizer } from '../model/tokenizer/index.ts';
import { GuessLimiter } from '../protocol/guess-limiter.ts';
import { createServeApp } from './create-serve-app.ts';
import { type DecodeRuntime, LocalDecodeRuntime } from './decode-runtime.ts';
import { ServeEngine } from './engine.ts';
import { type ServeConfigInput, resolveServeConfig } from './serve-config.ts';
import type { ServeFault } from './serve-fault.ts';
import { unixSeconds } from './serve-context.ts';
import { WorkerDecodeRuntime } from './workers/worker-decode-runtime.ts';

/** The config's input (serve-config.ts: each field's doc and default), and where log lines go. */
export type ServeModelOptions = ServeConfigInput & {
  readonly log?: (line: string) => void;
  /** A fault hook for tests (serve-fault.ts: EDGERL_SERVE_FAULT); never set in service. */
  readonly fault?: ServeFault;
};

export interface ServingModel {
  /** e.g. http://127.0.0.1:8000 (append /v1 for OpenAI clients). */
  readonly url: string;
  readonly baseName: string;
  readonly engine: ServeEngine;
  /** What the engine decodes with: the model in this thread, or the decode workers. */
  readonly runtime: DecodeRuntime;
  /** Stops listening, ends running requests with 503 and frees the model. */
  close(): Promise<void>;
}

/** Subdirectories of `dir` that hold an adapter_config.json, sorted by name. */
export function findAdapterDirs(dir: string): { name: string; path: string }[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new Error(`adapters directory ${dir} does not exist`);
  return readdirSync(dir)
    .sort()
    .map((name) => ({ name, path: join(dir, name) }))
    .filter(({ path }) => statSync(path).isDirectory() && existsSync(join(path, 'adapter_config.json')));
}

/** The model in this thread (0 workers) or in `workers` decode worker threads. */
async function openRuntime(
  modelDir: string,
  workers: number,
  backend: BackendChoice,
  fillRows: number,
): Promise<DecodeRuntime> {
  if (workers === 0) return new LocalDecodeRuntime(await loadModel(modelDir));
  const config = await loadModelConfig(modelDir);
  return WorkerDecodeRuntime.start({ workers, backend, modelDir, config, fillRows });
}

export async function serveModel({ log: logTo, fault, ...input }: ServeModelOptions): Promise<ServingModel> {
  const options = resolveServeConfig(input);
  const log = logTo ?? ((line: string) => process.stderr.write(`${line}\n`));
  const backend = await selectBackend({ requested: options.backend, log });
  const { workers } = options;
  const opening = openRuntime(options.modelDir, workers, backend.choice, options.workerFillRows);
  const [runtime, tokenizer] = await Promise.all([opening, loadTokenizer(options.modelDir)]).catch(
    async (error: unknown) => {
      // A tokenizer that fails to load must not leave the model (or its worker threads) behind.
      await opening.then((opened) => opened.close()).catch(() => undefined);
      throw error;
    },
  );
  if (workers > 0) log(`edgerl serve-model: ${workers} decode worker thread(s)`);
  const limit = runtime.config.maxPositionEmbeddings;
  const maxModelLen = options.maxModelLen ?? limit;
  if (!Number.isInteger(maxModelLen) || maxModelLen < 2 || maxModelLen > limit) {
    await runtime.close();
    throw new Error(
      `max model length must be an integer in [2, ${limit}] (the model's max_position_embeddings), got ${maxModelLen}`,
    );
  }
  const baseName = options.servedModelName ?? options.modelDir;
  const engine = new ServeEngine(runtime, baseName, {
    maxModelLen,
    maxNumSeqs: options.maxNumSeqs,
    maxPrefillTokens: options.maxPrefillTokens,
    ...(fault ? { fault } : {}),
  });
  if (fault) log(`edgerl serve-model: FAULT HOOK ${fault} is on (EDGERL_SERVE_FAULT; tests only)`);
  const shutdown = async () => {
    await engine.close();
    await runtime.close();
  };
  try {
    for (const { name, path } of options.adaptersDir ? findAdapterDirs(options.adaptersDir) : []) {
      await engine.loadAdapter(name, path);
      log(`edgerl serve-model: adapter ${name} from ${path}`);
    }
  } catch (error) {
    await shutdown();
    throw error;
  }
  const app = createServeApp({
    engine,
    tokenizer,
    vocabSize: runtime.config.vocabSize,
    maxModelLen,
    baseName,
    basePath: options.modelDir,
    created: unixSeconds(),
    apiKey: options.apiKey,
    limiter: new GuessLimiter({ log }),
    maxBodyBytes: options.maxBodyBytes,
  });
  const { host } = options;
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: host, port: options.port }, () => resolve(started));
    if (started instanceof Server) started.keepAliveTimeout = serverKeepAliveMs;
    started.once('error', reject);
  }).catch(async (error: unknown) => {
    await shutdown();
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    baseName,
    engine,
    runtime,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await shutdown();
        if ('closeAllConnections' in server) server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
