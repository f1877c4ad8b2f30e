// Shared setup of the endpoint tests: a tiny random Qwen2 model (what `edgerl model init` writes) in a
// temporary directory, the endpoint on a free port in this process, the official `openai` client
// pointed at it, and a separately loaded copy of the model as the independent reference (uncached
// forward passes, and test/support/generate.ts: the decode batch without the server's engine,
// scheduling, row sampler or HTTP).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { initModelDir } from '../../model/init-model-dir.ts';
import { loadModel, type PolicyModel } from '../../model/policy-model.ts';
import { type ChatTokenizer, loadTokenizer } from '../../model/tokenizer/index.ts';
import { type ServeModelOptions, type ServingModel, serveModel } from '../../serve/serve-model.ts';

export interface TestServer {
  readonly dir: string;
  readonly modelDir: string;
  readonly serving: ServingModel;
  readonly client: OpenAI;
  /** The same checkpoint loaded apart from the server. */
  readonly reference: PolicyModel;
  readonly tokenizer: ChatTokenizer;
  close(): Promise<void>;
}

export const modelName = 'tiny';

export async function startTestServer(options: Partial<ServeModelOptions> = {}): Promise<TestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'edgerl-serve-'));
  const modelDir = join(dir, 'model');
  await initModelDir(modelDir, { preset: 'tiny', architecture: 'qwen2', seed: 0, dtype: 'F32' });
  const serving = await serveModel({
    modelDir,
    port: 0,
    servedModelName: modelName,
    backend: 'wasm',
    log: () => {},
    ...options,
  });
  const [reference, tokenizer] = await Promise.all([loadModel(modelDir), loadTokenizer(modelDir)]);
  const client = new OpenAI({
    baseURL: `${serving.url}/v1`,
    apiKey: options.apiKey ?? 'unused',
    maxRetries: 0,
  });
  return {
    dir,
    modelDir,
    serving,
    client,
    reference,
    tokenizer,
    async close() {
      await serving.close();
      reference.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a PEFT adapter whose B matrices are random too (so it changes outputs) and returns its path. */
export async function writeAdapter(server: TestServer, name: string, seed: number): Promise<string> {
  const path = join(server.dir, 'adapters', name);
  server.reference.addAdapter(
    name,
    { r: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'o_proj', 'down_proj'], initLoraWeights: false },
    { seed },
  );
  await server.reference.saveAdapter(name, path);
  return path;
}

/** A chat completion with the fields vLLM adds, which the openai client's types do not know. */
export type VllmChat = Omit<OpenAI.Chat.Completions.ChatCompletion, 'choices'> & {
  prompt_token_ids?: number[] | null;
  choices: (OpenAI.Chat.Completions.ChatCompletion.Choice & {
    token_ids?: number[] | null;
    stop_reason?: string | number | null;
  })[];
};

/** The OpenAI error body of a failed raw fetch. */
export async function errorOf(response: Response): Promise<{
  message: string;
  type: string;
  param: string | null;
  code: number;
}> {
  const body = (await response.json()) as {
    error: { message: string; type: string; param: string | null; code: number };
  };
  return body.error;
}

/** Casts a request body with vLLM's extra fields to the client's parameter type. */
export function withExtras<T>(body: T & Record<string, unknown>): T {
  return body;
}
