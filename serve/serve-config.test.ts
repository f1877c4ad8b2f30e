// serve-model's config: the body limit's documented default and its bounds (the rest of the config is
// exercised through the command's tests).
import { describe, expect, it } from 'vitest';
import { resolveServeConfig, ServeConfigError } from './serve-config.ts';

describe('maxBodyBytes', () => {
  it('defaults to 8 MiB, the edge proxy limit', () => {
    expect(resolveServeConfig({ modelDir: 'm' }).maxBodyBytes).toBe(8 * 1024 * 1024);
  });

  it('refuses a limit that is not a positive integer, naming the flag', () => {
    for (const maxBodyBytes of [0, -1, 1.5]) {
      expect(() => resolveServeConfig({ modelDir: 'm', maxBodyBytes })).toThrow(ServeConfigError);
      expect(() => resolveServeConfig({ modelDir: 'm', maxBodyBytes })).toThrow(/max-body-bytes/);
    }
  });
});
