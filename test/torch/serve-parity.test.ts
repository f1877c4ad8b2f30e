// A torch-trained adapter served by `edgerl serve-model` (loaded through /v1/load_lora_adapter, as the
// trainer publishes it) samples tokens whose logprobs, as the endpoint reports them, are the torch
// engine's own for the same prompt and completion (1e-4: the endpoint decodes with a KV cache).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import type { TorchEngine } from '../../trainer/engine/torch/torch-engine.ts';
import { largestDifference } from '../support/max-difference.ts';
import { useWasm } from '../train/support/tiny-policy.ts';
import {
  openTorch,
  optimizerSettings,
  randomSequences,
  writeModel,
  writeStartAdapter,
} from './support/engines.ts';

let root: string;
let torch: TorchEngine;
let serving: ServingModel;

beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-serve-parity-'));
  const modelDir = join(root, 'model');
  await writeModel(modelDir);
  await writeStartAdapter(modelDir, join(root, 'start'));
  torch = await openTorch(modelDir);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});
afterAll(async () => {
  await Promise.all([torch?.close(), serving?.close()]);
  await rm(root, { recursive: true, force: true });
});

describe('a torch-trained adapter on edgerl serve-model', () => {
  it("reports the torch engine's log-probs for what it samples", async () => {
    await torch.startAdapter({ kind: 'peft', dir: join(root, 'start') });
    await torch.resetOptimizer(optimizerSettings);
    for (const seed of [1, 2]) {
      await torch.step({
        sequences: randomSequences(4, { vocabSize: torch.model.vocabSize, seed }),
        objective: { kind: 'sft' },
        microBatchTokens: 4096,
        maxGradNorm: 1,
        learningRate: 5e-2,
        padTokenId: 0,
      });
    }
    const adapterDir = join(root, 'trained');
    await torch.save(adapterDir, { optimizer: false });
    const load = await fetch(`${serving.url}/v1/load_lora_adapter`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lora_name: 'trained', lora_path: adapterDir }),
    });
    expect(load.status, await load.text()).toBe(200);

    const response = await fetch(`${serving.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'trained',
        messages: [{ role: 'user', content: 'say something' }],
        max_tokens: 12,
        temperature: 1,
        seed: 3,
        logprobs: true,
        return_token_ids: true,
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      prompt_token_ids: number[];
      choices: { token_ids: number[]; logprobs: { content: { logprob: number }[] } }[];
    };
    const [choice] = body.choices;
    if (!choice) throw new Error('no choice');
    const served = choice.logprobs.content.map((entry) => entry.logprob);
    expect(served).toHaveLength(choice.token_ids.length);
    const ids = [...body.prompt_token_ids, ...choice.token_ids];
    const [all] = await torch.logprobs([ids], { adapter: true });
    // logprob[t] predicts ids[t + 1]: the completion's start at the prompt's last position.
    const engine = (all ?? []).slice(body.prompt_token_ids.length - 1);
    const { difference } = largestDifference(served, engine);
    expect(difference, `largest |Δ| ${difference}`).toBeLessThanOrEqual(1e-4);
    // And the adapter matters: the base model's log-probs for the same tokens differ.
    const [base] = await torch.logprobs([ids], { adapter: false });
    expect(
      largestDifference(served, (base ?? []).slice(body.prompt_token_ids.length - 1)).difference,
    ).toBeGreaterThan(1e-3);
  });
});
