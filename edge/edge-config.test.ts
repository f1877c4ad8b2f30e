import { describe, expect, it } from 'vitest';
import { edgeConfigFromEnv } from './edge-config.ts';

describe('edgeConfigFromEnv', () => {
  it('reads the variables with their defaults', () => {
    expect(
      edgeConfigFromEnv({
        INFERENCE_BASE_URL: 'http://127.0.0.1:8000/v1',
        EDGE_API_KEYS: ' k1, k2 ,',
        DEFAULT_MODEL: 'agent',
      }),
    ).toEqual({
      upstream: { baseUrl: 'http://127.0.0.1:8000/v1', requestTokenIds: true, timeoutMs: 120_000 },
      apiKeys: ['k1', 'k2'],
      defaultModel: 'agent',
      episodeConcurrency: 8,
      policyTimeoutMs: 120_000,
    });
    const openai = edgeConfigFromEnv({
      INFERENCE_BASE_URL: 'https://api.openai.com/v1',
      INFERENCE_API_KEY: 'sk-x',
      INFERENCE_TOKEN_IDS: 'false',
      INFERENCE_TIMEOUT_MS: '5000',
      EPISODE_CONCURRENCY: '2',
      EDGE_API_KEYS: 'k',
    });
    expect(openai.upstream).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-x',
      requestTokenIds: false,
      timeoutMs: 5000,
    });
    expect(openai.episodeConcurrency).toBe(2);
  });

  it('lists every problem with the variable to fix', () => {
    expect(() =>
      edgeConfigFromEnv({
        INFERENCE_BASE_URL: 'localhost:8000',
        EPISODE_CONCURRENCY: '0',
        INFERENCE_TOKEN_IDS: 'yes',
      }),
    ).toThrow(
      /INFERENCE_BASE_URL must be an http\(s\) URL[\s\S]*EDGE_API_KEYS must hold at least one key[\s\S]*EPISODE_CONCURRENCY must be a positive integer, got "0"[\s\S]*INFERENCE_TOKEN_IDS must be "true" or "false"/,
    );
  });
});
