// Fault scenario: one of serve-model's decode workers dies mid-decode (its thread is terminated while
// its rows are decoding, as a crash would end it). Every request of that batch answers 503 naming
// the worker (a batch whose cache is half gone cannot go on; clients retry a 503), nothing hangs,
// and the server keeps serving: the worker is started again with the adapters loaded at the time,
// and the same seeded request then gives the same tokens as before the fault. Nothing is left
// running or leased.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initModelDir } from '../../model/init-model-dir.ts';
import { loadModel } from '../../model/policy-model.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { WorkerDecodeRuntime } from '../../serve/workers/worker-decode-runtime.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';

let root: string;
let serving: ServingModel;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'edgerl-decode-worker-killed-'));
  const modelDir = join(root, 'model');
  await initModelDir(modelDir, { preset: 'tiny', architecture: 'qwen2', seed: 0, dtype: 'F32' });
  serving = await serveModel({
    modelDir,
    port: 0,
    servedModelName: 'tiny',
    backend: 'wasm',
    workers: 2,
    // Every batch spread over both workers (the default keeps up to 16 rows on one).
    workerFillRows: 0,
    log: () => {},
  });
  const model = await loadModel(modelDir);
  model.addAdapter(
    'lora',
    { r: 4, alpha: 8, targets: ['q_proj', 'v_proj'], initLoraWeights: false },
    { seed: 5 },
  );
  await model.saveAdapter('lora', join(root, 'lora'));
  model.dispose();
  const loaded = await post('load_lora_adapter', { lora_name: 'lora', lora_path: join(root, 'lora') });
  expect(loaded.status).toBe(200);
});

afterAll(async () => {
  await serving?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${serving.url}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const chat = (seed: number, maxTokens: number) =>
  post('chat/completions', {
    model: 'lora',
    messages: [{ role: 'user', content: `request ${seed}` }],
    seed,
    temperature: 1,
    max_tokens: maxTokens,
    ignore_eos: true,
    return_token_ids: true,
  });

async function tokenIds(response: Response): Promise<number[]> {
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { token_ids: number[] }[] };
  return body.choices[0]?.token_ids as number[];
}

describe('a decode worker killed mid-decode', () => {
  it('fails its batch with a 503 naming the worker, then serves again on a fresh worker', async (context) => {
    const runtime = serving.runtime;
    if (!(runtime instanceof WorkerDecodeRuntime)) throw new Error('the server runs no decode workers');
    const before = await tokenIds(await chat(7, 8));

    const steps = serving.engine.stats().decodeSteps;
    // Long enough that the kill lands mid-decode on a busy machine: 4 rows, two on each worker.
    const doomed = [1, 2, 3, 4].map((seed) => chat(seed, 3000));
    while (serving.engine.stats().decodeSteps < steps + 3) await new Promise((r) => setTimeout(r, 5));
    expect(serving.engine.stats().running).toBe(4);
    await runtime.kill(0);

    const answers = await Promise.all(doomed);
    const errors = await Promise.all(
      answers.map(async (response) => ({
        status: response.status,
        message: ((await response.json()) as { error: { message: string } }).error.message,
      })),
    );
    for (const error of errors) {
      expect(error.status).toBe(503);
      expect(error.message).toMatch(/decode worker 0 exited/);
    }

    // The server keeps serving: worker 0 comes back with the adapter, and the seeded request repeats.
    expect(await tokenIds(await chat(7, 8))).toEqual(before);
    expect(runtime.running).toBe(2);
    const models = (await (await fetch(`${serving.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((model) => model.id)).toContain('lora');

    const stats = serving.engine.stats();
    const leases = serving.engine.registry.list().reduce((sum, entry) => sum + entry.leases, 0);
    const leaks = stats.running + stats.waiting + leases;
    recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks });
    expect(leaks).toBe(0);
  });
});
