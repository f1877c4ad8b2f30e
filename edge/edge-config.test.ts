import { describe, expect, it, vi } from 'vitest';
import { EdgeConfigError, edgeConfigFields, edgeConfigFromEnv } from './edge-config.ts';

describe('edgeConfigFromEnv', () => {
  it('reads the variables with their defaults', () => {
    expect(
      edgeConfigFromEnv({
        EDGERL_INFERENCE_URL: 'http://127.0.0.1:8000/v1',
        EDGERL_EDGE_API_KEYS: ' k1, k2 ,',
        EDGERL_DEFAULT_MODEL: 'agent',
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
      EDGERL_INFERENCE_URL: 'https://api.openai.com/v1',
      EDGERL_INFERENCE_API_KEY: 'sk-x',
      EDGERL_INFERENCE_TOKEN_IDS: 'false',
      EDGERL_INFERENCE_TIMEOUT_MS: '5000',
      EDGERL_EPISODE_CONCURRENCY: '2',
      EDGERL_EDGE_API_KEYS: 'k',
      EDGERL_EPISODE_LEASE_SECONDS: '5',
      EDGERL_EPISODE_SWEEP_SECONDS: '2',
      EDGERL_EPISODE_MAX_RESUMES: '0',
      EDGERL_EPISODE_MAX_AGE_SECONDS: '600',
      EDGERL_EDGE_RUNNER: 'edge-a',
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
        EDGERL_INFERENCE_URL: 'localhost:8000',
        EDGERL_EPISODE_CONCURRENCY: '0',
        EDGERL_INFERENCE_TIMEOUT_MS: '1.5',
        EDGERL_INFERENCE_TOKEN_IDS: 'yes',
        EDGERL_EPISODE_LEASE_SECONDS: '0',
        EDGERL_EPISODE_MAX_RESUMES: '-1',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EdgeConfigError);
    expect((error as EdgeConfigError).code).toBe('invalid-edge-config');
    expect([...(error as EdgeConfigError).issues].sort()).toEqual(
      [
        'EDGERL_INFERENCE_URL must be an http(s) URL such as http://127.0.0.1:8000/v1, got "localhost:8000"',
        'EDGERL_EDGE_API_KEYS must hold at least one key (comma-separated); clients send it as a bearer token',
        'EDGERL_EPISODE_CONCURRENCY must be a positive integer, got "0"',
        'EDGERL_INFERENCE_TIMEOUT_MS must be a positive integer, got "1.5"',
        'EDGERL_INFERENCE_TOKEN_IDS must be "true" or "false", got "yes"',
        'EDGERL_EPISODE_LEASE_SECONDS must be a positive integer, got "0"',
        'EDGERL_EPISODE_MAX_RESUMES must be a whole number (0 or more), got "-1"',
      ].sort(),
    );
  });

  it('reads blank variables as unset and names a missing URL', () => {
    const blank = {
      EDGERL_INFERENCE_TIMEOUT_MS: ' ',
      EDGERL_EPISODE_CONCURRENCY: '',
      EDGERL_INFERENCE_TOKEN_IDS: '',
      EDGERL_EDGE_API_KEYS: 'k',
    };
    expect(() => edgeConfigFromEnv(blank)).toThrow(
      /^edge configuration:\n {2}EDGERL_INFERENCE_URL must be an http\(s\) URL .*, got ""$/,
    );
    const config = edgeConfigFromEnv({
      ...blank,
      EDGERL_INFERENCE_URL: ' http://h/v1 ',
      EDGERL_INFERENCE_TOKEN_IDS: 'FALSE',
    });
    expect(config.upstream).toEqual({
      baseUrl: 'http://h/v1',
      requestTokenIds: false,
      timeoutMs: 120_000,
      maxReplyBytes: 1024 * 1024,
    });
    expect(config.episodeConcurrency).toBe(8);
  });

  it('reads a fleet from EDGERL_INFERENCE_REPLICAS, which replaces EDGERL_INFERENCE_URL', () => {
    const config = edgeConfigFromEnv({
      EDGERL_EDGE_API_KEYS: 'k',
      EDGERL_INFERENCE_REPLICAS: 'http://a:8000/v1/, http://b:8000/v1,,http://a:8000/v1',
    });
    expect(config.fleet).toEqual({ replicas: ['http://a:8000/v1', 'http://b:8000/v1'], cacheMs: 1000 });
    expect(config.upstream.baseUrl).toBe('http://a:8000/v1');
    expect(
      edgeConfigFromEnv({ EDGERL_EDGE_API_KEYS: 'k', EDGERL_INFERENCE_URL: 'http://h/v1' }).fleet,
    ).toBeUndefined();
    expect(() =>
      edgeConfigFromEnv({
        EDGERL_EDGE_API_KEYS: 'k',
        EDGERL_INFERENCE_REPLICAS: 'http://a:8000/v1,http://b:8000',
      }),
    ).toThrow(/EDGERL_INFERENCE_REPLICAS must end in \/v1 .*got "http:\/\/b:8000"/);
  });

  it("reads several inference URLs (the trainer's comma-separated variable) as the fleet", () => {
    const config = edgeConfigFromEnv({
      EDGERL_EDGE_API_KEYS: 'k',
      EDGERL_INFERENCE_URL: 'http://a:8000/v1,http://b:8000/v1',
    });
    expect(config.fleet).toEqual({ replicas: ['http://a:8000/v1', 'http://b:8000/v1'], cacheMs: 1000 });
    expect(config.upstream.baseUrl).toBe('http://a:8000/v1');
  });

  it('still reads the former names, and says so in one line', () => {
    const lines: string[] = [];
    const config = edgeConfigFromEnv(
      {
        INFERENCE_BASE_URL: 'http://h/v1',
        EDGE_API_KEYS: 'old',
        EPISODE_CONCURRENCY: '3',
        // A current name wins over its former one, which is then not reported.
        DEFAULT_MODEL: 'former',
        EDGERL_DEFAULT_MODEL: 'current',
      },
      (line) => lines.push(line),
    );
    expect(config.upstream.baseUrl).toBe('http://h/v1');
    expect(config.apiKeys).toEqual(['old']);
    expect(config.episodeConcurrency).toBe(3);
    expect(config.defaultModel).toBe('current');
    expect(lines).toEqual([
      'deprecated names, still read for now: INFERENCE_BASE_URL → EDGERL_INFERENCE_URL, EDGE_API_KEYS → EDGERL_EDGE_API_KEYS, EPISODE_CONCURRENCY → EDGERL_EPISODE_CONCURRENCY',
    ]);
    // The current names alone: nothing to say.
    edgeConfigFromEnv({ EDGERL_INFERENCE_URL: 'http://h/v1', EDGERL_EDGE_API_KEYS: 'k' }, (line) =>
      lines.push(line),
    );
    expect(lines).toHaveLength(1);
  });

  it("warns of former names once per isolate in the Worker (its env is fixed for the isolate's life)", () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      edgeConfigFromEnv({ INFERENCE_BASE_URL: 'http://h/v1', EDGE_API_KEYS: 'k' });
      edgeConfigFromEnv({ INFERENCE_BASE_URL: 'http://h/v1', EDGE_API_KEYS: 'k' });
      expect(warn.mock.calls).toEqual([
        [
          'edgerl edge: deprecated names, still read for now: INFERENCE_BASE_URL → EDGERL_INFERENCE_URL, EDGE_API_KEYS → EDGERL_EDGE_API_KEYS',
        ],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('documents every variable it reads, with the defaults it applies', () => {
    const docs = Object.fromEntries(edgeConfigFields.map((field) => [field.doc.env, field.defaultValue]));
    expect(docs).toEqual({
      EDGERL_INFERENCE_URL: undefined,
      EDGERL_INFERENCE_REPLICAS: undefined,
      EDGERL_FLEET_CACHE_MS: 1000,
      EDGERL_INFERENCE_API_KEY: undefined,
      EDGERL_INFERENCE_TOKEN_IDS: true,
      EDGERL_INFERENCE_TIMEOUT_MS: 120_000,
      EDGERL_EDGE_API_KEYS: undefined,
      EDGERL_EDGE_RECORD_KEYS: [],
      EDGERL_EDGE_ROLLOUT_KEYS: [],
      EDGERL_EDGE_AUTH_MAX_FAILURES: 5,
      EDGERL_EDGE_TRUSTED_PROXIES: 0,
      EDGERL_DEFAULT_MODEL: undefined,
      EDGERL_SQL_DATABASE_URL: undefined,
      EDGERL_EPISODE_CONCURRENCY: 8,
      EDGERL_EPISODE_LEASE_SECONDS: 60,
      EDGERL_EPISODE_SWEEP_SECONDS: 60,
      EDGERL_EPISODE_MAX_RESUMES: 3,
      EDGERL_EPISODE_MAX_AGE_SECONDS: 86_400,
      EDGERL_EDGE_RUNNER: undefined,
      EDGERL_EPISODE_MAX_TOOL_CALLS: 16,
      EDGERL_EPISODE_TOOL_BUDGET_MS: 60_000,
      EDGERL_EPISODE_MAX_REPLY_BYTES: 1024 * 1024,
      EDGERL_POLICY_VOCAB_SIZE: undefined,
      EDGERL_EDGE_MAX_QUEUED_EPISODES: 256,
      EDGERL_POLICY_MAX_QUEUED_EPISODES: 1024,
    });
    // Each field is read from the variable it documents.
    for (const field of edgeConfigFields) expect(field.path).toEqual([field.doc.env]);
  });
});
