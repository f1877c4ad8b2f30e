import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeadline } from './deadline.ts';

// A server that answers only after a second: any call to it that returns sooner was cut by its deadline.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((_request, response) => {
    setTimeout(() => response.end('late'), 1_000);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The process's garbage collector, exposed at run time (the flag applies to contexts made after it). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

async function outcome(call: Promise<Response>): Promise<string> {
  try {
    return await (await call).text();
  } catch (error) {
    return (error as Error).name;
  }
}

describe('startDeadline', () => {
  it('cuts a call that outlives it, with a TimeoutError, even when a collection runs meanwhile', async () => {
    const gc = collector();
    const episode = new AbortController();
    const deadline = startDeadline(100, episode.signal);
    const call = fetch(url, { signal: deadline.signal });
    // The collection that, with AbortSignal.any over AbortSignal.timeout, takes the timeout signal:
    // that call then waits the server's full second (nodejs/node#57736).
    setTimeout(gc, 20);
    expect(await outcome(call)).toBe('TimeoutError');
    expect(deadline.timedOut).toBe(true);
    deadline.clear();
  });

  it("aborts with the parent's reason when the parent aborts first, and is not a timeout", async () => {
    const episode = new AbortController();
    const deadline = startDeadline(5_000, episode.signal);
    const call = fetch(url, { signal: deadline.signal });
    setTimeout(() => episode.abort(new Error('episode cancelled')), 20);
    expect(await outcome(call)).toBe('Error');
    expect(deadline.signal.reason).toEqual(new Error('episode cancelled'));
    expect(deadline.timedOut).toBe(false);
    deadline.clear();
  });

  it('starts aborted under a parent that already is', () => {
    const deadline = startDeadline(5_000, AbortSignal.abort('gone'));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe('gone');
    deadline.clear();
  });

  it('once cleared, neither fires nor stays hooked to the parent', async () => {
    const episode = new AbortController();
    const deadlines = Array.from({ length: 8 }, () => startDeadline(30, episode.signal));
    expect(getEventListeners(episode.signal, 'abort')).toHaveLength(8);
    for (const deadline of deadlines) deadline.clear();
    // A long-lived episode signal gathers no listener per call.
    expect(getEventListeners(episode.signal, 'abort')).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(deadlines.some((deadline) => deadline.signal.aborted || deadline.timedOut)).toBe(false);
    deadlines[0]?.clear();
  });
});
