import { describe, expect, it } from 'vitest';
import { defaultWorkerCount, resolveWorkerCount } from './worker-count.ts';

describe('worker count', () => {
  it('is one per core on the single-threaded CPU backends and one elsewhere', () => {
    expect(defaultWorkerCount('wasm', 6)).toBe(6);
    expect(defaultWorkerCount('cpu', 2)).toBe(2);
    for (const backend of ['node', 'node-gpu', 'webgpu', 'webgpu:software'] as const) {
      expect(defaultWorkerCount(backend, 8)).toBe(1);
    }
  });

  it('takes a requested count over the default, and 1 without a backend', () => {
    expect(resolveWorkerCount(3, 'webgpu')).toBe(3);
    expect(resolveWorkerCount(null, undefined)).toBe(1);
    expect(resolveWorkerCount(null, 'wasm')).toBe(defaultWorkerCount('wasm'));
  });
});
