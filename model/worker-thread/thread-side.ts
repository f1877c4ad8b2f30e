// The thread's side of worker-thread.ts's envelope: requests are handled one at a time in arrival
// order (a backend runs one thing at a time, and later requests may depend on earlier ones), each
// answered with {kind: 'done', id, …} or {kind: 'failed', id, message}. Import only inside a worker
// thread.
import { parentPort } from 'node:worker_threads';
import { errorMessage } from '../../protocol/error-message.ts';
import type { ThreadFailed, ThreadRequest } from './worker-thread.ts';

export interface ThreadAnswer {
  /** The fields of the `done` message besides kind and id. */
  readonly reply?: object;
  /** Buffers moved to the owner rather than copied. */
  readonly transfer?: readonly ArrayBuffer[];
}

function port() {
  if (!parentPort)
    throw new Error('this module runs as a worker thread (model/worker-thread/worker-thread.ts)');
  return parentPort;
}

/** Posts an event of the owner's protocol (anything but ready, done and failed). */
export function postEvent<Event extends { readonly kind: string }>(event: Event): void {
  port().postMessage(event);
}

/** Reports a failed start (the model did not load) and ends the thread. */
export function failStart(error: unknown, what: string): never {
  port().postMessage({
    kind: 'failed',
    id: null,
    message: `${what}: ${errorMessage(error)}`,
  } satisfies ThreadFailed);
  process.exit(1);
}

/** Answers each request with `handle`, one at a time, then says the thread is ready. */
export function answerRequests<Request extends ThreadRequest>(
  handle: (request: Request) => Promise<ThreadAnswer> | ThreadAnswer,
): void {
  const to = port();
  let queue = Promise.resolve();
  to.on('message', (request: Request) => {
    queue = queue.then(async () => {
      try {
        const { reply, transfer } = await handle(request);
        to.postMessage({ ...reply, kind: 'done', id: request.id }, [...(transfer ?? [])]);
      } catch (error) {
        to.postMessage({
          kind: 'failed',
          id: request.id,
          message: errorMessage(error),
        } satisfies ThreadFailed);
      }
    });
  });
  to.postMessage({ kind: 'ready' });
}
