// What every trainer test starts from: the wasm backend, a temporary directory holding the tiny model
// (model/), that model loaded to sample with and its tokenizer, and a test store (PGlite, or the CI's
// Postgres). `useTrainerRig` registers the hooks that make and remove them; a test file's own hooks,
// registered after it, run inside (vitest runs afterAll hooks in reverse order).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../../db/store.ts';
import { loadModel, type PolicyModel } from '../../../model/policy-model.ts';
import type { ChatTokenizer } from '../../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../../model/tokenizer/load-tokenizer.ts';
import { openTestStore, type TestStore } from '../../support/open-test-store.ts';
import { useWasm, writeTinyModelDir } from './tiny-policy.ts';

export interface TrainerRig {
  readonly root: string;
  readonly modelDir: string;
  readonly sampler: PolicyModel;
  readonly tokenizer: ChatTokenizer;
  /** Undefined with `{ store: false }`. */
  readonly testStore: TestStore;
  readonly store: Store;
}

/** Fields are set once the rig's beforeAll has run: read them in hooks and tests, not at import. */
export function useTrainerRig(prefix: string, options: { readonly store?: boolean } = {}): TrainerRig {
  const rig = {} as { -readonly [K in keyof TrainerRig]: TrainerRig[K] };
  beforeAll(async () => {
    await useWasm();
    rig.root = await mkdtemp(join(tmpdir(), prefix));
    rig.modelDir = join(rig.root, 'model');
    await writeTinyModelDir(rig.modelDir);
    [rig.sampler, rig.tokenizer] = await Promise.all([loadModel(rig.modelDir), loadTokenizer(rig.modelDir)]);
    if (options.store !== false) {
      rig.testStore = await openTestStore();
      rig.store = rig.testStore.store;
    }
  }, 180_000);
  afterAll(async () => {
    rig.sampler?.dispose();
    await rig.testStore?.close();
    if (rig.root) await rm(rig.root, { recursive: true, force: true });
  });
  return rig;
}
