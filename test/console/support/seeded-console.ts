// A seeded store (test/support/seed-console.ts) with the console serving it in this process, the way
// `edgerl console` serves it (cli/console/start-console.ts), on a free port; the test keeps the store
// to write to it while the browser watches, and to check in SQL what the page changed.
import { type RunningConsole, startConsole } from '../../../cli/console/start-console.ts';
import type { Store } from '../../../db/store.ts';
import { type ConsoleSeed, seedConsoleStore } from '../../support/seed-console.ts';
import { openTestStore, type TestStore } from '../../support/open-test-store.ts';

export interface SeededConsole {
  readonly store: Store;
  readonly seed: ConsoleSeed;
  readonly console: RunningConsole;
  /** The console's URL for a path under it (`/groups` → http://127.0.0.1:PORT/console/groups). */
  url(path?: string): string;
  close(): Promise<void>;
}

export async function startSeededConsole(options: { readonly pollMs?: number } = {}): Promise<SeededConsole> {
  const test: TestStore = await openTestStore();
  try {
    const seed = await seedConsoleStore(test.store);
    const running = await startConsole({
      store: test.store,
      access: { kind: 'loopback' },
      port: 0,
      pollMs: options.pollMs ?? 200,
      logError: (error) => console.error('console under test:', error),
    });
    return {
      store: test.store,
      seed,
      console: running,
      url: (path = '') => `${running.url}${path}`,
      async close() {
        await running.close();
        await test.close();
      },
    };
  } catch (error) {
    await test.close();
    throw error;
  }
}

/** One value from SQL: what the tests compare the pages with, read without the console's code. */
export async function sqlValue(
  store: Store,
  text: string,
  params: readonly unknown[] = [],
): Promise<unknown> {
  const result = await store.sql.query(text, params);
  return result.rows[0]?.[0];
}
