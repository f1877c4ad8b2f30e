import { describe, expect, it } from 'vitest';
import { defaultServeWorkers } from './serve-worker-count.ts';

describe('serve-model decode workers by default', () => {
  it('are one on the single-threaded CPU backends and none elsewhere', () => {
    expect(defaultServeWorkers('wasm')).toBe(1);
    expect(defaultServeWorkers('cpu')).toBe(1);
    for (const backend of ['node', 'node-gpu', 'webgpu', 'webgpu:software'] as const) {
      expect(defaultServeWorkers(backend)).toBe(0);
    }
  });
});
