// Opens a store for the request and releases it when the response is ready: through waitUntil where
// the runtime has one (Workers: the pool closes after the response is sent), else before returning.
// A streaming response that still needs the store after the handler returns takes a hold with
// `c.var.keepStore()` and lets go when its stream ends; the store is released after the last hold.
import type { MiddlewareHandler } from 'hono';
import type { EdgeEnv } from '../app-env.ts';
import type { StoreProvider } from '../store-provider.ts';

export function withStore(provider: StoreProvider): MiddlewareHandler<EdgeEnv> {
  // Learnt from the first request: a runtime has an execution context for every request or for none
  // (asking Hono for a missing one throws, which costs a stack trace on every Node request).
  let hasExecutionContext = true;
  return async (c, next) => {
    const handle = await provider.open();
    let holds = 0;
    let handlerDone = false;
    let freed: (() => void) | undefined;
    const whenFree = new Promise<void>((resolve) => {
      freed = resolve;
    });
    const checkFree = () => {
      if (handlerDone && holds === 0) freed?.();
    };
    c.set('store', handle.store);
    c.set('keepStore', () => {
      holds += 1;
      let let_go = false;
      return () => {
        if (let_go) return;
        let_go = true;
        holds -= 1;
        checkFree();
      };
    });
    try {
      await next();
    } finally {
      handlerDone = true;
      checkFree();
      const released = whenFree.then(() => handle.release()).catch(() => {});
      const waitUntil = hasExecutionContext ? executionWaitUntil(c) : undefined;
      if (!waitUntil) hasExecutionContext = false;
      if (waitUntil) waitUntil(released);
      else if (holds === 0) await released;
    }
  };
}

/** Hono throws when asked for an execution context the runtime does not have (Node). */
export function executionWaitUntil(c: {
  executionCtx: { waitUntil(promise: Promise<unknown>): void };
}): ((promise: Promise<unknown>) => void) | undefined {
  try {
    const context = c.executionCtx;
    return (promise) => context.waitUntil(promise);
  } catch {
    return undefined;
  }
}
