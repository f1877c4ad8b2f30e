// Concurrent requests decode together: eight clients asking at once share decode steps (the engine's
// counters show steps holding all eight rows, and far fewer steps than one-by-one decoding needs),
// and batching changes no answer: each equals the same request served alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelName, startTestServer, type TestServer, type VllmChat, withExtras } from './test-server.ts';

const tokens = 24;

describe('batching', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  const ask = async (episode: number) => {
    const response = await server.client.chat.completions.create(
      withExtras({
        model: modelName,
        messages: [{ role: 'user', content: `Episode ${episode}: what is the value of key ${episode * 7}?` }],
        temperature: 0,
        max_tokens: tokens,
        ignore_eos: true,
        return_token_ids: true,
      }),
    );
    return (response as unknown as VllmChat).choices[0]?.token_ids;
  };

  it('decodes a group of 8 concurrent requests in shared steps, with the answers they get alone', async () => {
    const before = server.serving.engine.stats();
    const together = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(i)));
    const after = server.serving.engine.stats();
    const steps = after.decodeSteps - before.decodeSteps;
    const withEight = (after.rowsPerStep[8] ?? 0) - (before.rowsPerStep[8] ?? 0);
    // One by one, 8 requests of 24 tokens take 8 × 23 = 184 decode steps (the first token of each
    // comes from its prefill); together about 23 plus the few steps before all have arrived.
    expect(withEight).toBeGreaterThan(0);
    expect(steps).toBeLessThan(184 / 2);
    expect(after.decodeRows - before.decodeRows).toBe(8 * (tokens - 1));

    const alone: (number[] | null | undefined)[] = [];
    for (let i = 0; i < 8; i++) alone.push(await ask(i));
    expect(together).toEqual(alone);
    expect(together.every((ids) => ids?.length === tokens)).toBe(true);
  });
});
