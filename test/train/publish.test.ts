// publishAdapter: against the local inference endpoint (copy, load, list, probe; a repeat reuses the
// copy and the loaded adapter), and against the inference double for each stage's failure.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../model/policy-model.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { publishAdapter } from '../../trainer/train/publish.ts';
import { startInferenceDouble } from './support/inference-double.ts';
import { useWasm, writeTinyModelDir } from './support/tiny-policy.ts';

let root: string;
let adapterDir: string;
let serving: ServingModel;

beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-publish-'));
  const modelDir = join(root, 'model');
  await writeTinyModelDir(modelDir);
  const model = await loadModel(modelDir);
  model.addAdapter('a', { r: 2, alpha: 4, targets: ['q_proj'], initLoraWeights: false }, { seed: 5 });
  adapterDir = join(root, 'checkpoint');
  await model.saveAdapter('a', adapterDir);
  model.dispose();
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});

afterAll(async () => {
  await serving?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const endpoint = (baseUrl: string) => ({ baseUrl, timeoutMs: 10_000 });

describe('publishAdapter', () => {
  it('copies, loads, lists and probes an adapter on the local endpoint; a repeat reuses both', async () => {
    const servingDir = join(root, 'serving');
    const input = {
      sourceDir: adapterDir,
      servingDir,
      adapterName: 'p@1',
      endpoint: endpoint(`${serving.url}/v1`),
    };
    const first = await publishAdapter(input);
    expect(first).toEqual({
      ok: true,
      adapterPath: join(servingDir, 'p@1'),
      reused: { copy: false, load: false },
    });
    expect((await readdir(join(servingDir, 'p@1'))).sort()).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
    ]);
    expect(serving.engine.registry.list().map((entry) => entry.name)).toContain('p@1');
    const again = await publishAdapter(input);
    expect(again).toMatchObject({ ok: true, reused: { copy: true, load: true } });
    // No temporary directory is left beside the published one.
    expect(await readdir(servingDir)).toEqual(['p@1']);
  });

  it('reports an unreachable server at the first stage that needs it', async () => {
    const outcome = await publishAdapter({
      sourceDir: adapterDir,
      servingDir: join(root, 'serving-unreachable'),
      adapterName: 'p@2',
      endpoint: endpoint('http://127.0.0.1:9/v1'),
    });
    expect(outcome).toMatchObject({ ok: false, stage: 'list' });
    if (outcome.ok) throw new Error('unexpected success');
    expect(outcome.reason).toMatch(/^GET \/models to http:\/\/127\.0\.0\.1:9\/v1 failed: /);
  });

  it('fails at copy when the checkpoint holds no adapter', async () => {
    const outcome = await publishAdapter({
      sourceDir: join(root, 'missing'),
      servingDir: join(root, 'serving-copy'),
      adapterName: 'p@3',
      endpoint: endpoint(`${serving.url}/v1`),
    });
    expect(outcome).toMatchObject({ ok: false, stage: 'copy' });
  });

  it("fails at load, list or probe with the server's own message", async () => {
    const cases = [
      {
        script: { load: { status: 400, body: { error: { message: 'max_loras reached' } } } },
        stage: 'load',
        reason: 'POST /load_lora_adapter answered 400: max_loras reached',
      },
      {
        script: { listLoaded: false },
        stage: 'list',
        reason: 'GET /models does not list "p@4" after loading it (it lists base)',
      },
      {
        script: { probe: { status: 500, body: { error: { message: 'CUDA out of memory' } } } },
        stage: 'probe',
        reason: 'POST /chat/completions answered 500: CUDA out of memory',
      },
      {
        script: { probe: { status: 200, body: { choices: [] } } },
        stage: 'probe',
        reason: 'the probe completion came back without choices',
      },
    ] as const;
    for (const { script, stage, reason } of cases) {
      const double = await startInferenceDouble(script);
      try {
        const outcome = await publishAdapter({
          sourceDir: adapterDir,
          servingDir: join(root, `serving-${stage}`),
          serverDir: '/srv/adapters',
          adapterName: 'p@4',
          endpoint: { ...endpoint(double.baseUrl), apiKey: 'k' },
        });
        expect(outcome).toEqual({ ok: false, stage, reason });
        const load = double.calls.find((call) => call.path === '/v1/load_lora_adapter');
        expect(load?.body).toEqual({ lora_name: 'p@4', lora_path: '/srv/adapters/p@4' });
        double.verify();
      } finally {
        await double.close();
      }
    }
  });
});
