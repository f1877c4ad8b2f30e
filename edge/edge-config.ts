// The edge's configuration, read once by each entry point (Worker env bindings, or process.env and
// flags in Node) from the same variable names, with defaults and the checks that say how to fix a
// bad value. Modules get the slices they need; nothing else reads the environment.
import { ConfigError } from '../protocol/config-error.ts';
import type { UpstreamEndpoint } from './proxy/upstream.ts';

export interface EdgeConfig {
  readonly upstream: UpstreamEndpoint;
  readonly apiKeys: readonly string[];
  readonly defaultModel?: string;
  /** Node only: episodes running at once in the in-process queue. */
  readonly episodeConcurrency: number;
  /** One policy call inside an episode, in milliseconds. */
  readonly policyTimeoutMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The defaults of the optional variables. */
export const edgeDefaults = {
  /** 120 s: a long agent turn on a loaded vLLM server; the episode loop retries timeouts. */
  inferenceTimeoutMs: 120_000,
  /** 8: enough to keep one inference server busy without starving the Node event loop of the edge. */
  episodeConcurrency: 8,
} as const;

/** Every variable the edge reads, with what it holds (and its default, from `edgeDefaults`). */
export const edgeVariables = {
  INFERENCE_BASE_URL: 'the OpenAI-compatible inference endpoint up to /v1 (vLLM, `edgerl serve-model`)',
  INFERENCE_API_KEY: 'bearer key for the inference endpoint (optional; local servers need none)',
  INFERENCE_TOKEN_IDS: '"false" for endpoints that reject vLLM\'s return_token_ids (OpenAI); default true',
  INFERENCE_TIMEOUT_MS: `one inference call, in ms; default ${edgeDefaults.inferenceTimeoutMs}`,
  EDGE_API_KEYS: 'comma-separated bearer keys clients must send to /v1',
  DEFAULT_MODEL: 'policy or model requests get when they name neither a policy nor an experiment (optional)',
  EPISODE_CONCURRENCY: `Node: episodes running at once; default ${edgeDefaults.episodeConcurrency}`,
} as const;

/** Bad variables, every problem listed with the variable to fix. */
export class EdgeConfigError extends ConfigError {
  override readonly name = 'EdgeConfigError';
  readonly code = 'invalid-edge-config';
  constructor(issues: readonly string[]) {
    super(issues, 'edge configuration:\n  ', '\n  ');
  }
}

/** Throws one error listing every problem, each with the variable's name and what it should hold. */
export function edgeConfigFromEnv(env: Env): EdgeConfig {
  const problems: string[] = [];
  const baseUrl = env.INFERENCE_BASE_URL?.trim() ?? '';
  if (!/^https?:\/\/[^/]/.test(baseUrl)) {
    problems.push(
      `INFERENCE_BASE_URL must be an http(s) URL such as http://127.0.0.1:8000/v1, got "${baseUrl}"`,
    );
  }
  const apiKeys = (env.EDGE_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
  if (apiKeys.length === 0) {
    problems.push(
      'EDGE_API_KEYS must hold at least one key (comma-separated); clients send it as a bearer token',
    );
  }
  const timeoutMs = positiveInt(env, 'INFERENCE_TIMEOUT_MS', edgeDefaults.inferenceTimeoutMs, problems);
  const concurrency = positiveInt(env, 'EPISODE_CONCURRENCY', edgeDefaults.episodeConcurrency, problems);
  const tokenIds = env.INFERENCE_TOKEN_IDS?.trim().toLowerCase();
  if (tokenIds !== undefined && tokenIds !== '' && tokenIds !== 'true' && tokenIds !== 'false') {
    problems.push(`INFERENCE_TOKEN_IDS must be "true" or "false", got "${env.INFERENCE_TOKEN_IDS}"`);
  }
  if (problems.length > 0) throw new EdgeConfigError(problems);
  const apiKey = env.INFERENCE_API_KEY?.trim();
  const defaultModel = env.DEFAULT_MODEL?.trim();
  return {
    upstream: {
      baseUrl,
      ...(apiKey ? { apiKey } : {}),
      requestTokenIds: tokenIds !== 'false',
      timeoutMs,
    },
    apiKeys,
    ...(defaultModel ? { defaultModel } : {}),
    episodeConcurrency: concurrency,
    policyTimeoutMs: timeoutMs,
  };
}

function positiveInt(env: Env, name: string, fallback: number, problems: string[]): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    problems.push(`${name} must be a positive integer, got "${raw}"`);
    return fallback;
  }
  return value;
}
