// The setup of the round-trip tests: a counting store (counting-store.ts) and the inference double,
// opened before the file's tests and closed after them.
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../db/store.ts';
import { type InferenceDouble, startInferenceDouble } from '../edge/support/inference-double.ts';
import { type CountingStore, openCountingStore } from './counting-store.ts';

export interface CountingSetup {
  readonly counting: CountingStore;
  readonly store: Store;
  readonly inference: InferenceDouble;
}

/** Registers the hooks; the returned object's fields are set once beforeAll has run. */
export function useCountingSetup(): CountingSetup {
  const setup = {} as { counting: CountingStore; store: Store; inference: InferenceDouble };
  beforeAll(async () => {
    setup.counting = await openCountingStore();
    setup.store = setup.counting.store;
    setup.inference = await startInferenceDouble();
  });
  afterAll(async () => {
    await setup.counting?.close();
    await setup.inference?.close();
  });
  return setup;
}
