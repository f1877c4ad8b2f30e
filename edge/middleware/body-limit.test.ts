// The body cap: judged by Content-Length when the request declares one, counted as it streams when it
// does not, the edge's JSON 413 either way; a body within the cap reaches the handler whole.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errorResponse } from '../http/error-response.ts';
import { bodyLimit } from './body-limit.ts';

const app = new Hono()
  .post('/', bodyLimit(10), async (c) => c.text(`got ${(await c.req.text()).length}`))
  .onError((error, c) => c.json(errorResponse(error).body, errorResponse(error).status as 413));

function streamed(text: string): RequestInit {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const char of text) controller.enqueue(new TextEncoder().encode(char));
      controller.close();
    },
  });
  return { method: 'POST', body, duplex: 'half' } as RequestInit;
}

describe('bodyLimit', () => {
  it('refuses a declared length over the cap and passes one within it', async () => {
    const declared = (length: number, body: string) =>
      app.request('/', { method: 'POST', body, headers: { 'content-length': String(length) } });
    const over = await declared(11, '12345678901');
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: { code: 'payload-too-large', field: 'body' } });
    // The header alone decides (a server's HTTP parser never reads past it).
    expect((await declared(100, '1')).status).toBe(413);
    expect(await (await declared(10, '1234567890')).text()).toBe('got 10');
  });

  it('counts a body sent without a length as it streams', async () => {
    const over = await app.request('/', streamed('12345678901'));
    expect(over.status).toBe(413);
    const within = await app.request('/', streamed('12345'));
    expect(await within.text()).toBe('got 5');
  });
});
