// LoRA adapters at run time, as vLLM serves them: load/unload routes, /v1/models listing, selection by
// `model`, failures that leave loaded adapters serving, in-place reload, and unloading while a
// request decodes on the adapter. Outputs are checked against generate() with the same adapter
// loaded into the reference model.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import {
  modelName,
  startTestServer,
  type TestServer,
  type VllmChat,
  withExtras,
  errorOf,
  writeAdapter,
} from './test-server.ts';
import { generate } from '../support/generate.ts';

const question: ChatMessage[] = [{ role: 'user', content: 'Hello there' }];

describe('LoRA adapters', () => {
  let server: TestServer;
  let promptIds: number[];
  let pathA: string;
  let pathB: string;
  beforeAll(async () => {
    server = await startTestServer();
    promptIds = server.tokenizer.encodeChat(question, { addGenerationPrompt: true });
    pathA = await writeAdapter(server, 'a', 1);
    pathB = await writeAdapter(server, 'b', 2);
  });
  afterAll(() => server.close());

  const post = (path: string, body: unknown) =>
    fetch(`${server.serving.url}/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const greedy = async (model: string) => {
    const response = await server.client.chat.completions.create(
      withExtras({
        model,
        messages: question,
        temperature: 0,
        max_tokens: 6,
        ignore_eos: true,
        return_token_ids: true,
      }),
    );
    return (response as unknown as VllmChat).choices[0]?.token_ids;
  };

  const expectedGreedy = async (adapter: string | null) => {
    const [generation] = await generate(server.reference, [promptIds], {
      temperature: 0,
      maxTokens: 6,
      stopTokenIds: [],
      adapter,
    });
    return generation?.tokenIds;
  };

  it('loads, lists, selects and unloads adapters with vLLM’s answers', async () => {
    const load = await post('load_lora_adapter', { lora_name: 'a', lora_path: pathA });
    expect(load.status).toBe(200);
    expect(await load.text()).toBe("Success: LoRA adapter 'a' added successfully.");
    expect((await post('load_lora_adapter', { lora_name: 'b', lora_path: pathB })).status).toBe(200);

    const models = await server.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([modelName, 'a', 'b']);
    expect(models.data[1]).toMatchObject({
      object: 'model',
      owned_by: 'edgerl',
      root: pathA,
      parent: modelName,
    });
    expect(models.data[0]).toMatchObject({ root: server.modelDir, parent: null, max_model_len: 4096 });

    const [base, viaA, viaB] = await Promise.all([greedy(modelName), greedy('a'), greedy('b')]);
    expect(base).toEqual(await expectedGreedy(null));
    expect(viaA).toEqual(await expectedGreedy('a'));
    expect(viaB).toEqual(await expectedGreedy('b'));
    expect(new Set([base, viaA, viaB].map((ids) => JSON.stringify(ids))).size).toBe(3);

    const again = await post('load_lora_adapter', { lora_name: 'a', lora_path: pathB });
    expect(again.status).toBe(400);
    expect((await errorOf(again)).message).toBe("The lora adapter 'a' has already been loaded.");

    const unload = await post('unload_lora_adapter', { lora_name: 'a' });
    expect(unload.status).toBe(200);
    expect(await unload.text()).toBe("Success: LoRA adapter 'a' removed successfully.");
    await expect(greedy('a')).rejects.toMatchObject({ status: 404 });
    const unknown = await post('unload_lora_adapter', { lora_name: 'a' });
    expect(unknown.status).toBe(404);
    expect(await errorOf(unknown)).toMatchObject({
      message: "The lora adapter 'a' cannot be found.",
      type: 'NotFoundError',
      code: 404,
    });
    expect(await greedy('b')).toEqual(viaB);
    expect((await post('unload_lora_adapter', { lora_name: 'b' })).status).toBe(200);
  });

  it('fails a bad load with a clear error and keeps every loaded adapter serving', async () => {
    expect((await post('load_lora_adapter', { lora_name: 'keep', lora_path: pathA })).status).toBe(200);
    const before = await greedy('keep');

    const missing = await post('load_lora_adapter', { lora_name: 'x', lora_path: join(server.dir, 'nope') });
    expect(missing.status).toBe(404);
    expect((await errorOf(missing)).message).toMatch(/No adapter found for .*nope: no such directory/);

    const broken = join(server.dir, 'broken');
    await mkdir(broken, { recursive: true });
    await writeFile(join(broken, 'adapter_config.json'), '{"peft_type": "LORA", "r": 4');
    const bad = await post('load_lora_adapter', { lora_name: 'x', lora_path: broken });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toMatch(/cannot load adapter 'x': .*broken/);

    const noFields = await post('load_lora_adapter', { lora_name: 'x' });
    expect(noFields.status).toBe(400);
    expect((await errorOf(noFields)).message).toBe("Both 'lora_name' and 'lora_path' must be provided.");

    const models = await server.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([modelName, 'keep']);
    expect(await greedy('keep')).toEqual(before);
    expect((await post('unload_lora_adapter', { lora_name: 'keep' })).status).toBe(200);
  });

  it('replaces an adapter in place, and unloading mid-request lets the request finish', async () => {
    expect((await post('load_lora_adapter', { lora_name: 'live', lora_path: pathA })).status).toBe(200);
    const inplace = await post('load_lora_adapter', {
      lora_name: 'live',
      lora_path: pathB,
      load_inplace: true,
    });
    expect(inplace.status).toBe(200);
    expect(await greedy('live')).toEqual(await expectedGreedy('b'));

    // A long request on "live" is decoding when the unload arrives; it completes on the old weights.
    const long = server.client.chat.completions.create(
      withExtras({
        model: 'live',
        messages: question,
        temperature: 0,
        max_tokens: 40,
        ignore_eos: true,
        return_token_ids: true,
      }),
    );
    while (server.serving.engine.stats().running === 0)
      await new Promise((resolve) => setTimeout(resolve, 1));
    expect((await post('unload_lora_adapter', { lora_name: 'live' })).status).toBe(200);
    const finished = (await long) as unknown as VllmChat;
    const [expected] = await generate(server.reference, [promptIds], {
      temperature: 0,
      maxTokens: 40,
      stopTokenIds: [],
      adapter: 'b',
    });
    expect(finished.choices[0]?.token_ids).toEqual(expected?.tokenIds);
    await expect(greedy('live')).rejects.toMatchObject({ status: 404 });
  });
});
