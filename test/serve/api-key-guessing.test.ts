// serve-model's --api-key under guessing, over HTTP against the real endpoint (a tiny random model in
// process, as the other endpoint tests): five wrong keys from an address, then 429 with Retry-After in
// OpenAI's error shape, even for the right key; the log line names the address, never the key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, startTestServer, type TestServer } from './test-server.ts';

const apiKey = 'serve-key-0123456789';
const lines: string[] = [];
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ apiKey, log: (line) => lines.push(line) });
});
afterAll(async () => {
  await server?.close();
});

const models = (key: string) =>
  fetch(`${server.serving.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });

describe('serve-model api key guessing', () => {
  it('answers the sixth wrong key and then the right one with 429 and Retry-After', async () => {
    expect((await models(apiKey)).status).toBe(200);
    // The old check compared lengths first; a wrong key of the right length or not is a plain 401.
    for (const wrong of ['x', 'serve-key-012345678X', 'serve-key-0123456789-longer', 'a', 'b']) {
      expect((await models(wrong)).status).toBe(401);
    }
    const blocked = await models('c');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await errorOf(blocked)).toMatchObject({ type: 'RateLimitError', code: 429 });
    expect((await models(apiKey)).status).toBe(429);
    // /health stays open for probes.
    expect((await fetch(`${server.serving.url}/health`)).status).toBe(200);
    const failures = lines.filter((line) => line.includes('auth-failure'));
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]).toMatch(/client (::ffff:)?127\.0\.0\.1, route GET \/v1\/models/);
    for (const line of failures) expect(line).not.toMatch(/serve-key/);
  });
});
