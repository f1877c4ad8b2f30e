// The recording proxy holds an upstream reply to EDGERL_EPISODE_MAX_REPLY_BYTES (edge/proxy/upstream.ts
// replyLimits): a body past the bound is cancelled where it is, nothing of the exchange is stored, and
// the trajectory ends `error` with the reason. The upstream here is a test double (an endless body
// that counts what was pulled from it): no real endpoint can be made to send 50 MB on purpose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordChatCompletion } from '../../edge/proxy/record-chat-completion.ts';
import { proxyRequestSchema } from '../../edge/proxy/proxy-request.ts';
import type { UpstreamEndpoint } from '../../edge/proxy/upstream.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

/** An upstream double whose body is `head`, then `filler` repeated up to `totalBytes`; counts pulls. */
function floodingUpstream(options: { head: string; filler: string; totalBytes: number; tail?: string }) {
  const seen = { pulledBytes: 0, cancelled: false };
  const encoder = new TextEncoder();
  const fetchDouble: typeof fetch = async () => {
    let sentHead = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sentHead) {
          sentHead = true;
          controller.enqueue(encoder.encode(options.head));
          return;
        }
        if (seen.pulledBytes >= options.totalBytes) {
          if (options.tail) controller.enqueue(encoder.encode(options.tail));
          controller.close();
          return;
        }
        const chunk = encoder.encode(options.filler);
        seen.pulledBytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
      cancel() {
        seen.cancelled = true;
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetchDouble, seen };
}

async function clientTrajectory(): Promise<string> {
  const started = await testStore.store.startTrajectory({ env: 'my-agent', metadata: { model: 'm' } });
  return started.id;
}

const maxReplyBytes = 64 * 1024;
const fiftyMb = 50 * 1024 * 1024;

function endpoint(fetchDouble: typeof fetch): UpstreamEndpoint {
  return {
    baseUrl: 'http://upstream.invalid/v1',
    requestTokenIds: true,
    timeoutMs: 60_000,
    fetch: fetchDouble,
    maxReplyBytes,
  };
}

function request(stream: boolean) {
  return proxyRequestSchema.parse({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream });
}

describe('the proxy reply bound', () => {
  it('cancels a 50 MB non-streamed body at 32 × the bound, stores nothing and ends the trajectory', async () => {
    const id = await clientTrajectory();
    const { fetchDouble, seen } = floodingUpstream({
      head: '{"choices":[{"index":0,"message":{"role":"assistant","content":"',
      filler: 'x'.repeat(16 * 1024),
      totalBytes: fiftyMb,
      tail: '"},"finish_reason":"stop"}]}',
    });
    await expect(
      recordChatCompletion(
        { store: testStore.store, upstream: endpoint(fetchDouble) },
        { trajectoryId: id, request: request(false) },
      ),
    ).rejects.toMatchObject({ code: 'bad-gateway', message: expect.stringContaining('reply-too-large') });
    expect(seen.cancelled).toBe(true);
    // At most the cap and a chunk or two of read-ahead, not 50 MB.
    expect(seen.pulledBytes).toBeLessThan(32 * maxReplyBytes + 64 * 1024);
    const { trajectory, turns } = await testStore.store.getTrajectory(id);
    expect(turns).toHaveLength(0);
    expect(trajectory.status).toBe('error');
    expect(trajectory.errorReason).toMatch(/^reply-too-large: /);
  });

  it('refuses a whole reply within the body cap whose content passes the bound', async () => {
    const id = await clientTrajectory();
    const content = 'y'.repeat(maxReplyBytes + 1);
    const fetchDouble: typeof fetch = async () =>
      Response.json({
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      });
    await expect(
      recordChatCompletion(
        { store: testStore.store, upstream: endpoint(fetchDouble) },
        { trajectoryId: id, request: request(false) },
      ),
    ).rejects.toMatchObject({ message: expect.stringContaining(`is ${maxReplyBytes + 1} bytes`) });
    expect((await testStore.store.getTrajectory(id)).trajectory.status).toBe('error');
  });

  it('stops reading a 50 MB stream once the reply passes the bound, cancels upstream and ends the trajectory', async () => {
    const id = await clientTrajectory();
    const delta = (text: string) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;
    const { fetchDouble, seen } = floodingUpstream({
      head: delta(''),
      filler: delta('z'.repeat(4096)),
      totalBytes: fiftyMb,
    });
    const result = await recordChatCompletion(
      { store: testStore.store, upstream: endpoint(fetchDouble) },
      { trajectoryId: id, request: request(true) },
    );
    expect(result.status).toBe(200);
    const text = await new Response(result.body as ReadableStream<Uint8Array>).text();
    expect(text).toContain('reply-too-large: the streamed reply passed 65536 bytes');
    expect(text).not.toContain('[DONE]');
    expect(seen.cancelled).toBe(true);
    expect(seen.pulledBytes).toBeLessThan(2 * maxReplyBytes);
    const { trajectory, turns } = await testStore.store.getTrajectory(id);
    expect(turns).toHaveLength(0);
    expect(trajectory.status).toBe('error');
  });
});
