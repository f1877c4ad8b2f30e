import { describe, expect, it } from 'vitest';
import { EdgeConfigError, edgeConfigFields, edgeConfigFromEnv } from './edge-config.ts';

describe('edgeConfigFromEnv', () => {
  it('reads the variables with their defaults', () => {
    expect(
      edgeConfigFromEnv({
        INFERENCE_BASE_URL: 'http://127.0.0.1:8000/v1',
        EDGE_API_KEYS: ' k1, k2 ,',
        DEFAULT_MODEL: 'agent',
      }),
    ).toEqual({
      upstream: {
        baseUrl: 'http://127.0.0.1:8000/v1',
        requestTokenIds: true,
        timeoutMs: 120_000,
        maxReplyBytes: 1024 * 1024,
      },
      apiKeys: ['k1', 'k2'],
      recordKeys: [],
      rolloutKeys: [],
      trustedProxies: 0,
      authMaxFailures: 5,
      defaultModel: 'agent',
      episodeConcurrency: 8,
      policyTimeoutMs: 120_000,
      episodes: { leaseSeconds: 60, sweepSeconds: 60, maxResumes: 3, maxAgeSeconds: 86_400 },
      bounds: { maxToolCallsPerTurn: 16, toolBudgetMs: 60_000, maxReplyBytes: 1024 * 1024 },
      admission: { maxQueuedPerEdge: 256, maxQueuedPerPolicy: 1024 },
    });
    const openai = edgeConfigFromEnv({
      INFERENCE_BASE_URL: 'https://api.openai.com/v1',
      INFERENCE_API_KEY: 'sk-x',
      INFERENCE_TOKEN_IDS: 'false',
      INFERENCE_TIMEOUT_MS: '5000',
      EPISODE_CONCURRENCY: '2',
      EDGE_API_KEYS: 'k',
      EPISODE_LEASE_SECONDS: '5',
      EPISODE_SWEEP_SECONDS: '2',
      EPISODE_MAX_RESUMES: '0',
      EPISODE_MAX_AGE_SECONDS: '600',
      EDGE_RUNNER: 'edge-a',
    });
    expect(openai.upstream).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-x',
      requestTokenIds: false,
      timeoutMs: 5000,
      maxReplyBytes: 1024 * 1024,
    });
    expect(openai.episodeConcurrency).toBe(2);
    expect(openai.episodes).toEqual({ leaseSeconds: 5, sweepSeconds: 2, maxResumes: 0, maxAgeSeconds: 600 });
    expect(openai.runner).toBe('edge-a');
  });

  it('lists every problem with the variable to fix and what it should hold', () => {
    let error: unknown;
    try {
      edgeConfigFromEnv({
        INFERENCE_BASE_URL: 'localhost:8000',
        EPISODE_CONCURRENCY: '0',
        INFERENCE_TIMEOUT_MS: '1.5',
        INFERENCE_TOKEN_IDS: 'yes',
        EPISODE_LEASE_SECONDS: '0',
        EPISODE_MAX_RESUMES: '-1',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EdgeConfigError);
    expect((error as EdgeConfigError).code).toBe('invalid-edge-config');
    expect([...(error as EdgeConfigError).issues].sort()).toEqual(
      [
        'INFERENCE_BASE_URL must be an http(s) URL such as http://127.0.0.1:8000/v1, got "localhost:8000"',
        'EDGE_API_KEYS must hold at least one key (comma-separated); clients send it as a bearer token',
        'EPISODE_CONCURRENCY must be a positive integer, got "0"',
        'INFERENCE_TIMEOUT_MS must be a positive integer, got "1.5"',
        'INFERENCE_TOKEN_IDS must be "true" or "false", got "yes"',
        'EPISODE_LEASE_SECONDS must be a positive integer, got "0"',
        'EPISODE_MAX_RESUMES must be a whole number (0 or more), got "-1"',
      ].sort(),
    );
  });

  it('reads blank variables as unset and names a missing URL', () => {
    const blank = {
      INFERENCE_TIMEOUT_MS: ' ',
      EPISODE_CONCURRENCY: '',
      INFERENCE_TOKEN_IDS: '',
      EDGE_API_KEYS: 'k',
    };
    expect(() => edgeConfigFromEnv(blank)).toThrow(
      /^edge configuration:\n {2}INFERENCE_BASE_URL must be an http\(s\) URL .*, got ""$/,
    );
    const config = edgeConfigFromEnv({
      ...blank,
      INFERENCE_BASE_URL: ' http://h/v1 ',
      INFERENCE_TOKEN_IDS: 'FALSE',
    });
    expect(config.upstream).toEqual({
      baseUrl: 'http://h/v1',
      requestTokenIds: false,
      timeoutMs: 120_000,
      maxReplyBytes: 1024 * 1024,
    });
    expect(config.episodeConcurrency).toBe(8);
  });

  it('reads a fleet from INFERENCE_REPLICAS, which replaces INFERENCE_BASE_URL', () => {
    const config = edgeConfigFromEnv({
      EDGE_API_KEYS: 'k',
      INFERENCE_REPLICAS: 'http://a:8000/v1/, http://b:8000/v1,,http://a:8000/v1',
    });
    expect(config.fleet).toEqual({ replicas: ['http://a:8000/v1', 'http://b:8000/v1'], cacheMs: 1000 });
    expect(config.upstream.baseUrl).toBe('http://a:8000/v1');
    expect(
      edgeConfigFromEnv({ EDGE_API_KEYS: 'k', INFERENCE_BASE_URL: 'http://h/v1' }).fleet,
    ).toBeUndefined();
    expect(() =>
      edgeConfigFromEnv({ EDGE_API_KEYS: 'k', INFERENCE_REPLICAS: 'http://a:8000/v1,http://b:8000' }),
    ).toThrow(/INFERENCE_REPLICAS must end in \/v1 .*got "http:\/\/b:8000"/);
  });

  it('documents every variable it reads, with the defaults it applies', () => {
    const docs = Object.fromEntries(edgeConfigFields.map((field) => [field.doc.env, field.defaultValue]));
    expect(docs).toEqual({
      INFERENCE_BASE_URL: undefined,
      INFERENCE_REPLICAS: undefined,
      FLEET_CACHE_MS: 1000,
      INFERENCE_API_KEY: undefined,
      INFERENCE_TOKEN_IDS: true,
      INFERENCE_TIMEOUT_MS: 120_000,
      EDGE_API_KEYS: undefined,
      EDGE_RECORD_KEYS: [],
      EDGE_ROLLOUT_KEYS: [],
      EDGE_AUTH_MAX_FAILURES: 5,
      EDGE_TRUSTED_PROXIES: 0,
      DEFAULT_MODEL: undefined,
      SQL_DATABASE_URL: undefined,
      EPISODE_CONCURRENCY: 8,
      EPISODE_LEASE_SECONDS: 60,
      EPISODE_SWEEP_SECONDS: 60,
      EPISODE_MAX_RESUMES: 3,
      EPISODE_MAX_AGE_SECONDS: 86_400,
      EDGE_RUNNER: undefined,
      EPISODE_MAX_TOOL_CALLS: 16,
      EPISODE_TOOL_BUDGET_MS: 60_000,
      EPISODE_MAX_REPLY_BYTES: 1024 * 1024,
      POLICY_VOCAB_SIZE: undefined,
      EDGE_MAX_QUEUED_EPISODES: 256,
      POLICY_MAX_QUEUED_EPISODES: 1024,
    });
    // Each field is read from the variable it documents.
    for (const field of edgeConfigFields) expect(field.path).toEqual([field.doc.env]);
  });
});
