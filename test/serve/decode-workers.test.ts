// serve-model's decode workers (`--workers N`, serve/workers/): the same seeded requests give the same
// token ids, and logprobs within float tolerance, from the main thread (0), 1 worker and 2 workers,
// with several requests at once (so rows spread over the workers and join in different prefills),
// on the base model and on an adapter loaded at run time; an adapter load is acknowledged only once
// every worker holds it (requests on it then decode on both workers); an unloaded one is gone on all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import type { WorkerDecodeRuntime } from '../../serve/workers/worker-decode-runtime.ts';
import { startTestServer, type TestServer, writeAdapter } from './test-server.ts';

interface Choice {
  token_ids: number[];
  logprobs: { content: { logprob: number }[] };
}

let main: TestServer;
let servers: ServingModel[];
let adapterPath: string;

beforeAll(async () => {
  main = await startTestServer({ workers: 0 });
  adapterPath = await writeAdapter(main, 'lora', 3);
  servers = [main.serving];
  for (const workers of [1, 2]) {
    servers.push(
      await serveModel({
        modelDir: main.modelDir,
        port: 0,
        servedModelName: 'tiny',
        backend: 'wasm',
        workers,
        // Every batch spread over all workers (the default keeps up to 16 rows on one).
        workerFillRows: 0,
        log: () => {},
      }),
    );
  }
});

afterAll(async () => {
  await Promise.all(servers.slice(1).map((serving) => serving.close()));
  await main?.close();
});

const post = (serving: ServingModel, path: string, body: unknown) =>
  fetch(`${serving.url}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Four seeded requests at once, n = 2 each, sampled at temperature 1: eight rows. */
async function sampleGroup(serving: ServingModel, model: string): Promise<Choice[][]> {
  return Promise.all(
    Array.from({ length: 4 }, async (_, i) => {
      const response = await post(serving, 'chat/completions', {
        model,
        messages: [{ role: 'user', content: `Question ${i}: ${'what is the next key? '.repeat(i + 1)}` }],
        n: 2,
        seed: 40 + i,
        temperature: 1,
        max_tokens: 12,
        ignore_eos: true,
        logprobs: true,
        return_token_ids: true,
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { choices: Choice[] }).choices;
    }),
  );
}

function expectSame(actual: Choice[][], expected: Choice[][]): void {
  expect(actual.map((choices) => choices.map((choice) => choice.token_ids))).toEqual(
    expected.map((choices) => choices.map((choice) => choice.token_ids)),
  );
  actual.flat().forEach((choice, i) => {
    const reference = expected.flat()[i] as Choice;
    choice.logprobs.content.forEach((token, t) => {
      expect(token.logprob).toBeCloseTo(reference.logprobs.content[t]?.logprob as number, 4);
    });
  });
}

describe('decode workers', () => {
  it('start the threads they are asked for', () => {
    expect(servers.map((serving) => serving.runtime.workers)).toEqual([0, 1, 2]);
    expect(((servers[2] as ServingModel).runtime as WorkerDecodeRuntime).running).toBe(2);
  });

  it('give the main thread’s tokens and logprobs on the base model', async () => {
    const expected = await sampleGroup(main.serving, 'tiny');
    // Different seeds give different samples: the comparison can tell outputs apart.
    expect(expected[0]?.[0]?.token_ids).not.toEqual(expected[1]?.[0]?.token_ids);
    for (const serving of servers.slice(1)) expectSame(await sampleGroup(serving, 'tiny'), expected);
  });

  it('load an adapter into every worker before acknowledging it, and unload it from all', async () => {
    for (const serving of servers) {
      const response = await post(serving, 'load_lora_adapter', {
        lora_name: 'lora',
        lora_path: adapterPath,
      });
      expect(response.status).toBe(200);
    }
    const expected = await sampleGroup(main.serving, 'lora');
    expect(expected).not.toEqual(await sampleGroup(main.serving, 'tiny'));
    for (const serving of servers.slice(1)) expectSame(await sampleGroup(serving, 'lora'), expected);

    const two = servers[2] as ServingModel;
    expect((await post(two, 'unload_lora_adapter', { lora_name: 'lora' })).status).toBe(200);
    const after = await post(two, 'chat/completions', {
      model: 'lora',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    expect(after.status).toBe(404);
  });
});
