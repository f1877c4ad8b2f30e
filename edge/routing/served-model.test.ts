// Which versions are the base weights (served under the base model's name) and which are adapters.
import { describe, expect, it } from 'vitest';
import { isBaseVersion } from './served-model.ts';

const base = { version: 0, adapterUri: null, trainingRunId: null };

describe('isBaseVersion', () => {
  it('is the untrained version 0 with no adapter files', () => {
    expect(isBaseVersion(base)).toBe(true);
  });

  it('is not a later version, one with adapter files, or one a training run produced', () => {
    expect(isBaseVersion({ ...base, version: 1 })).toBe(false);
    expect(isBaseVersion({ ...base, adapterUri: '/adapters/p-0' })).toBe(false);
    // A policy created without a base version gets its first trained version as 0, before publication.
    expect(isBaseVersion({ ...base, trainingRunId: '00000000-0000-4000-8000-000000000000' })).toBe(false);
  });
});
