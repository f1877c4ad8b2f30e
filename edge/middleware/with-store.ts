// Opens a store for the request and releases it when the response is ready: through waitUntil where
// the runtime has one (Workers: the pool closes after the response is sent), else before returning.
// Streaming routes that outlive the handler open their own handle from the provider.
import type { MiddlewareHandler } from 'hono';
import type { EdgeEnv } from '../app-env.ts';
import type { StoreProvider } from '../store-provider.ts';

export function withStore(provider: StoreProvider): MiddlewareHandler<EdgeEnv> {
  return async (c, next) => {
    const handle = await provider.open();
    c.set('store', handle.store);
    try {
      await next();
    } finally {
      const released = handle.release().catch(() => {});
      const waitUntil = executionWaitUntil(c);
      if (waitUntil) waitUntil(released);
      else await released;
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
