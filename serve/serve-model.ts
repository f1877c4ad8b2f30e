// Starts the local inference endpoint in Node: picks the TensorFlow.js backend, loads the model, its
// tokenizer and the adapters found under `adaptersDir` (each subdirectory with an adapter_config.json,
// served under the folder's name, as vLLM's --lora-modules name=path), and listens with
// @hono/node-server. Port 0 picks a free port; `url` says which. Leaves flag and env parsing to the CLI.
import { existsSync, readdirSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { selectBackend } from '../model/backend.ts';
import { loadModel } from '../model/policy-model.ts';
import { loadTokenizer } from '../model/tokenizer/index.ts';
import { createServeApp } from './create-serve-app.ts';
import { ServeEngine } from './engine.ts';
import { unixSeconds } from './serve-context.ts';

export interface ServeModelOptions {
  /** Hugging Face model directory (config.json, safetensors, tokenizer files). */
  readonly modelDir: string;
  /** Directory whose subdirectories are PEFT adapters to serve from the start. */
  readonly adaptersDir?: string;
  /** Interface to listen on. Default 127.0.0.1 (local only); 0.0.0.0 exposes it. */
  readonly host?: string;
  /** TCP port; 0 picks a free one. Default 8000, vLLM's. */
  readonly port?: number;
  /** Require `Authorization: Bearer <apiKey>` on /v1 routes. */
  readonly apiKey?: string;
  /** The base model's name in requests and /v1/models. Default: `modelDir` as given, as vLLM does. */
  readonly servedModelName?: string;
  /** Longest prompt + output. Default and upper bound: the model's max_position_embeddings. */
  readonly maxModelLen?: number;
  /** Most sequences decoding at once. Default 64 (vLLM's 256 is sized for GPUs). */
  readonly maxNumSeqs?: number;
  /** Most padded prompt tokens per joining prefill. Default 8192 (vLLM's max_num_batched_tokens). */
  readonly maxPrefillTokens?: number;
  /** TensorFlow.js backend to require (a BackendChoice: webgpu, wasm, …); default: the first available. */
  readonly backend?: string;
  readonly log?: (line: string) => void;
}

export interface ServingModel {
  /** e.g. http://127.0.0.1:8000 (append /v1 for OpenAI clients). */
  readonly url: string;
  readonly baseName: string;
  readonly engine: ServeEngine;
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

export async function serveModel(options: ServeModelOptions): Promise<ServingModel> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  await selectBackend({ requested: options.backend, log });
  const [model, tokenizer] = await Promise.all([
    loadModel(options.modelDir),
    loadTokenizer(options.modelDir),
  ]);
  const limit = model.config.maxPositionEmbeddings;
  const maxModelLen = options.maxModelLen ?? limit;
  if (!Number.isInteger(maxModelLen) || maxModelLen < 2 || maxModelLen > limit) {
    model.dispose();
    throw new Error(
      `max model length must be an integer in [2, ${limit}] (the model's max_position_embeddings), got ${maxModelLen}`,
    );
  }
  const baseName = options.servedModelName ?? options.modelDir;
  const engine = new ServeEngine(model, baseName, {
    maxModelLen,
    maxNumSeqs: options.maxNumSeqs ?? 64,
    maxPrefillTokens: options.maxPrefillTokens ?? 8192,
  });
  const shutdown = async () => {
    await engine.close();
    model.dispose();
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
    vocabSize: model.config.vocabSize,
    maxModelLen,
    baseName,
    basePath: options.modelDir,
    created: unixSeconds(),
    apiKey: options.apiKey,
  });
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 8000 }, () =>
      resolve(started),
    );
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
