// The edge's own policy client (what episodes use against vLLM) against this endpoint: it gets exact
// prompt and completion ids with aligned logprobs, can address an adapter by a versioned name, and
// sees an unknown model as an HTTP 404 PolicyError, as it would from vLLM.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { OpenAIPolicyClient } from '../../edge/policy/openai-policy-client.ts';
import { PolicyError } from '../../edge/policy/policy-error.ts';
import { modelName, startTestServer, type TestServer, writeAdapter } from './test-server.ts';
import { generate } from '../support/generate.ts';

const tools: ToolSpec[] = [{ type: 'function', function: { name: 'lookup', description: 'Look up a key' } }];
const messages: ChatMessage[] = [
  { role: 'system', content: 'Answer with one digit.' },
  { role: 'user', content: 'What is a?' },
];

describe('edge OpenAIPolicyClient against serve-model', () => {
  let server: TestServer;
  let client: OpenAIPolicyClient;
  beforeAll(async () => {
    server = await startTestServer();
    client = new OpenAIPolicyClient({ baseUrl: `${server.serving.url}/v1` });
    await server.serving.engine.loadAdapter('agent@1', await writeAdapter(server, 'agent@1', 5));
  });
  afterAll(() => server.close());

  const ask = (model: string) =>
    client.complete({
      messages,
      tools,
      model,
      temperature: 1,
      maxTokens: 8,
      seed: 3,
      signal: AbortSignal.timeout(30_000),
    });

  it('receives token-exact turns from the base model and from an adapter', async () => {
    const prompt = server.tokenizer.encodeChat(messages, { tools, addGenerationPrompt: true });
    for (const model of [modelName, 'agent@1']) {
      const response = await ask(model);
      expect(response.servedBy).toBe(model);
      expect(response.promptTokenIds).toEqual(prompt);
      expect(response.completionTokenIds?.length).toBeGreaterThan(0);
      expect(response.completionLogprobs).toHaveLength(response.completionTokenIds?.length ?? -1);
      const [expected] = await generate(server.reference, [prompt], {
        seed: 3,
        maxTokens: 8,
        adapter: model === modelName ? null : 'agent@1',
      });
      expect(response.completionTokenIds).toEqual(expected?.tokenIds);
      const reference = await server.reference.logprobs([[...prompt, ...(expected?.tokenIds ?? [])]], {
        adapter: model === modelName ? null : 'agent@1',
      });
      response.completionLogprobs?.forEach((logprob, j) => {
        expect(Math.abs(logprob - (reference[0]?.[prompt.length - 1 + j] as number))).toBeLessThan(1e-4);
      });
    }
  });

  it('sees an unknown model as an HTTP 404', async () => {
    const error = await ask('agent@2').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PolicyError);
    expect(error).toMatchObject({ code: 'http', status: 404 });
  });
});
