// The edge's configuration as a zod schema over the variables it reads (Worker env bindings, or
// process.env and flags in Node), each default written once beside its doc; the checks say how to
// fix a bad value. Modules get the slices they need; nothing else reads the environment.
import { z } from 'zod';
import { configFields, documented, parseConfig } from '../protocol/config-docs.ts';
import { ConfigError } from '../protocol/config-error.ts';
import { guessLimitDefaults } from '../protocol/guess-limiter.ts';
import type { UpstreamEndpoint } from './proxy/upstream.ts';
import { parseReplicaList, replicaUrlProblem } from '../protocol/replica-url.ts';
import type { FleetSettings } from './routing/replica-router.ts';
import { type EpisodeLeaseSettings, episodeLeaseDefaults } from './rollouts/episode-leases.ts';
import { episodeBoundDefaults } from './episode/episode-defaults.ts';
import { type AdmissionLimits, admissionDefaults } from './rollouts/admit-episodes.ts';

export interface EdgeConfig {
  readonly upstream: UpstreamEndpoint;
  /** Keys with every scope (EDGE_API_KEYS): the console, and all of /v1. */
  readonly apiKeys: readonly string[];
  /** Keys with the record scope only (EDGE_RECORD_KEYS); absent: none. */
  readonly recordKeys?: readonly string[];
  /** Keys with the rollout scope, which includes record (EDGE_ROLLOUT_KEYS); absent: none. */
  readonly rolloutKeys?: readonly string[];
  /** Proxies in front of the edge whose X-Forwarded-For it trusts (protocol/client-address.ts); absent: 0. */
  readonly trustedProxies?: number;
  /** Wrong keys a client may send per minute before it is blocked (protocol/guess-limiter.ts); absent: its default. */
  readonly authMaxFailures?: number;
  readonly defaultModel?: string;
  /** Node only: episodes running at once in the in-process queue. */
  readonly episodeConcurrency: number;
  /** One policy call inside an episode, in milliseconds. */
  readonly policyTimeoutMs: number;
  /** The SQL sandbox (the reader role's URL); unset: the embedded sandbox in Node, none in a Worker. */
  readonly sqlDatabaseUrl?: string;
  /** Episode leases and the sweep; absent: `episodeLeaseDefaults`. */
  readonly episodes?: EpisodeLeaseSettings;
  /** Node: this edge's stable name on the episodes it runs; absent: `edge@<host>:<port>`. */
  readonly runner?: string;
  /** The inference fleet (INFERENCE_REPLICAS); absent: the one endpoint of `upstream`. */
  readonly fleet?: FleetSettings;
  /** What one policy reply may hold and cost (docs/edge.md, "Bounds"); absent: episodeBoundDefaults. */
  readonly bounds?: EpisodeBounds;
  /** Rollout admission (admit-episodes.ts); absent: admissionDefaults. */
  readonly admission?: AdmissionLimits;
}

export interface EpisodeBounds {
  readonly maxToolCallsPerTurn: number;
  readonly toolBudgetMs: number;
  readonly maxReplyBytes: number;
  readonly vocabSize?: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** `edgerl serve-model`'s default address: where `edgerl edge` points when INFERENCE_BASE_URL is unset. */
export const localInferenceUrl = 'http://127.0.0.1:8000/v1';

/** A variable's text as a positive integer; the message keeps the text as written. */
const positiveIntText = () =>
  z.string().transform((raw, context) => {
    const value = Number(raw);
    if (Number.isInteger(value) && value >= 1) return value;
    context.issues.push({ code: 'custom', input: raw, message: `must be a positive integer, got "${raw}"` });
    return z.NEVER;
  });

const baseUrlMessage = (issue: { input: unknown }) =>
  `must be an http(s) URL such as ${localInferenceUrl}, got "${typeof issue.input === 'string' ? issue.input : ''}"`;

const apiKeysMessage = 'must hold at least one key (comma-separated); clients send it as a bearer token';

/** A comma-separated key list, blanks dropped (EDGE_API_KEYS' parsing, for the scoped lists too). */
const keyList = () =>
  z.string().transform((text) =>
    text
      .split(',')
      .map((key) => key.trim())
      .filter((key) => key.length > 0),
  );

const section = 'Edge (the Worker reads the same variables)';

/** Keyed by the variables themselves, so a problem names the variable to fix (issueLines' 'path'). */
export const edgeConfigSchema = z
  .object({
    INFERENCE_BASE_URL: documented(
      z.string({ error: baseUrlMessage }).regex(/^https?:\/\/[^/]/, { error: baseUrlMessage }),
      {
        doc: 'OpenAI-compatible inference endpoint up to /v1: vLLM, `edgerl serve-model`',
        shownDefault: `in Node ${localInferenceUrl}, where \`edgerl serve-model\` listens`,
        flag: 'inference-url',
        arg: 'URL',
        env: 'INFERENCE_BASE_URL',
        section,
      },
    ),
    INFERENCE_REPLICAS: documented(
      z
        .string()
        .transform((text) => parseReplicaList(text))
        .superRefine((list, context) => {
          for (const url of list) {
            const problem = replicaUrlProblem(url);
            if (problem) context.addIssue({ code: 'custom', message: problem });
          }
        })
        .optional(),
      {
        doc: "the inference fleet, comma-separated base URLs up to /v1 (the trainer's --inference-url list); a version's requests go only to the replicas that hold it; replaces INFERENCE_BASE_URL",
        shownDefault: 'none: INFERENCE_BASE_URL alone',
        flag: 'replicas',
        arg: 'URLS',
        env: 'INFERENCE_REPLICAS',
        section,
      },
    ),
    FLEET_CACHE_MS: documented(positiveIntText().default(1000), {
      doc: "with INFERENCE_REPLICAS: how long a model's replicas read from the store are reused, in ms",
      source:
        'an edgerl choice: a commit or a quarantine reaches routing within a second, at one store read a second per model',
      env: 'FLEET_CACHE_MS',
    }),
    INFERENCE_API_KEY: documented(z.string().optional(), {
      doc: 'bearer key for the inference endpoint; local servers need none',
      env: 'INFERENCE_API_KEY',
    }),
    INFERENCE_TOKEN_IDS: documented(
      z
        .string()
        .transform((raw) => raw.toLowerCase())
        .pipe(
          z.enum(['true', 'false'], {
            error: (issue) => `must be "true" or "false", got "${String(issue.input)}"`,
          }),
        )
        .transform((text) => text === 'true')
        .default(true),
      {
        doc: '"false" for endpoints that reject vLLM\'s return_token_ids (OpenAI)',
        source: "vLLM's token ids keep training exact",
        env: 'INFERENCE_TOKEN_IDS',
      },
    ),
    INFERENCE_TIMEOUT_MS: documented(positiveIntText().default(120_000), {
      doc: 'one inference call, in ms; the episode loop retries timeouts',
      source: 'a long agent turn on a loaded vLLM server',
      env: 'INFERENCE_TIMEOUT_MS',
    }),
    EDGE_API_KEYS: documented(
      z
        .string({ error: apiKeysMessage })
        .transform((text) =>
          text
            .split(',')
            .map((key) => key.trim())
            .filter((key) => key.length > 0),
        )
        .pipe(z.array(z.string()).min(1, { error: apiKeysMessage })),
      {
        doc: 'bearer keys with every scope (admin: all of /v1 and the console), comma-separated',
        shownDefault: 'in Node, a random key, printed',
        flag: 'api-key',
        arg: 'KEY',
        env: 'EDGE_API_KEYS',
        section,
      },
    ),
    EDGE_RECORD_KEYS: documented(keyList().default([]), {
      doc: 'bearer keys with the record scope only: the recording proxy, client trajectories, ingest, reading trajectories',
      shownDefault: 'none',
      env: 'EDGE_RECORD_KEYS',
    }),
    EDGE_ROLLOUT_KEYS: documented(keyList().default([]), {
      doc: 'bearer keys with the rollout scope: POST /v1/rollouts, /v1/groups, and everything record may do',
      shownDefault: 'none',
      env: 'EDGE_ROLLOUT_KEYS',
    }),
    EDGE_AUTH_MAX_FAILURES: documented(positiveIntText().default(guessLimitDefaults.maxFailures), {
      doc: 'wrong API keys a client address may send within a minute before it gets 429 (backoff doubling to 15 min)',
      source:
        'a person retrying a mistyped key gets there in five; a guesser gets five a minute, not hundreds a second',
      env: 'EDGE_AUTH_MAX_FAILURES',
    }),
    EDGE_TRUSTED_PROXIES: documented(
      z
        .string()
        .transform((raw, context) => {
          const value = Number(raw);
          if (Number.isInteger(value) && value >= 0 && value <= 10) return value;
          context.issues.push({
            code: 'custom',
            input: raw,
            message: `must be a whole number of proxies from 0 to 10, got "${raw}"`,
          });
          return z.NEVER;
        })
        .default(0),
      {
        doc: "proxies in front of the edge that append X-Forwarded-For; the limiter's client address is the entry that many hops from the right",
        source: 'none trusted: a client could write any address into the header and dodge the limiter',
        env: 'EDGE_TRUSTED_PROXIES',
      },
    ),
    DEFAULT_MODEL: documented(z.string().optional(), {
      doc: 'policy or model for requests naming neither a policy nor an experiment',
      flag: 'default-model',
      arg: 'NAME',
      env: 'DEFAULT_MODEL',
      section,
    }),
    SQL_DATABASE_URL: documented(
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, {
          error: 'must be a postgres:// URL of the SQL sandbox reader (edgerl sandbox setup prints it)',
        })
        .optional(),
      {
        doc: "the SQL agent's sandbox database, as its reader role; never the store's URL (docs/sql-sandbox.md)",
        shownDefault:
          'in Node, an embedded sandbox in a worker thread; in a Worker, none (sql-agent refused)',
        flag: 'sql-database-url',
        arg: 'URL',
        env: 'SQL_DATABASE_URL',
        section,
      },
    ),
    EPISODE_CONCURRENCY: documented(positiveIntText().default(8), {
      doc: 'Node: episodes running at once',
      source: 'keeps one inference server busy without starving the edge of its event loop',
      flag: 'concurrency',
      arg: 'N',
      env: 'EPISODE_CONCURRENCY',
      section,
    }),
    EPISODE_LEASE_SECONDS: documented(positiveIntText().default(episodeLeaseDefaults.leaseSeconds), {
      doc: 'seconds a runner holds an episode without storing a turn; it beats every third of it',
      source: 'a killed edge is taken over within a minute (an edgerl choice); etcd renews at TTL/3',
      env: 'EPISODE_LEASE_SECONDS',
    }),
    EPISODE_SWEEP_SECONDS: documented(positiveIntText().default(episodeLeaseDefaults.sweepSeconds), {
      doc: 'Node: seconds between sweeps that resume or end stale episodes (Workers: the cron)',
      source: "Cloudflare cron triggers' one-minute granularity",
      env: 'EPISODE_SWEEP_SECONDS',
    }),
    EPISODE_MAX_RESUMES: documented(
      z
        .string()
        .transform((raw, context) => {
          const value = Number(raw);
          if (Number.isInteger(value) && value >= 0) return value;
          context.issues.push({
            code: 'custom',
            input: raw,
            message: `must be a whole number (0 or more), got "${raw}"`,
          });
          return z.NEVER;
        })
        .default(episodeLeaseDefaults.maxResumes),
      {
        doc: 'takeovers after which a stale episode is ended as error instead of resumed',
        source: "Cloudflare Queues' default max_retries",
        env: 'EPISODE_MAX_RESUMES',
      },
    ),
    EPISODE_MAX_AGE_SECONDS: documented(positiveIntText().default(episodeLeaseDefaults.maxAgeSeconds), {
      doc: 'a stale episode started longer ago than this (seconds) is ended instead of resumed',
      source: 'a day (an edgerl choice)',
      env: 'EPISODE_MAX_AGE_SECONDS',
    }),
    EDGE_RUNNER: documented(z.string().min(1).max(200).optional(), {
      doc: "Node: this edge's stable name on its episode leases; a restart under it resumes them at once",
      shownDefault: 'edge@<host>:<port>',
      flag: 'runner',
      arg: 'NAME',
      env: 'EDGE_RUNNER',
      section,
    }),
    EPISODE_MAX_TOOL_CALLS: documented(positiveIntText().default(episodeBoundDefaults.maxToolCallsPerTurn), {
      doc: "tool calls run per assistant turn; the rest of a reply's calls get one refusal observation",
      source: 'more than any shipped environment makes in a turn (they make one or two)',
      env: 'EPISODE_MAX_TOOL_CALLS',
    }),
    EPISODE_TOOL_BUDGET_MS: documented(positiveIntText().default(episodeBoundDefaults.toolBudgetMs), {
      doc: 'tool (SQL sandbox) time one episode may spend, in ms; past it calls get a refusal observation',
      source: "six full tool timeouts (10 s each); sql-agent's eight turns of ordinary queries take seconds",
      env: 'EPISODE_TOOL_BUDGET_MS',
    }),
    EPISODE_MAX_REPLY_BYTES: documented(positiveIntText().default(episodeBoundDefaults.maxReplyBytes), {
      doc: 'bytes of one policy reply (content + tool-call arguments); a larger one ends the episode error; the policy client and the recording proxy stop reading a response body at 32× it',
      source: 'the default 512 completion tokens are ~2 KB; a 32k-token turn is under 200 KB',
      env: 'EPISODE_MAX_REPLY_BYTES',
    }),
    POLICY_VOCAB_SIZE: documented(positiveIntText().optional(), {
      doc: "the policy's vocabulary size: a sampled token id must be below it (the model's config.json vocab_size)",
      shownDefault: 'unset: ids are only held below 2^31 (the int4 column)',
      env: 'POLICY_VOCAB_SIZE',
    }),
    EDGE_MAX_QUEUED_EPISODES: documented(positiveIntText().default(admissionDefaults.maxQueuedPerEdge), {
      doc: "Node: episodes waiting in this edge's queue above which POST /v1/rollouts answers 429 with Retry-After",
      source: 'one largest group (256) fits; about 16 minutes of work at the default concurrency',
      env: 'EDGE_MAX_QUEUED_EPISODES',
    }),
    POLICY_MAX_QUEUED_EPISODES: documented(positiveIntText().default(admissionDefaults.maxQueuedPerPolicy), {
      doc: "a policy's rollout episodes queued or running (all edges, in the store) above which POST /v1/rollouts and /v1/groups answer 429",
      source: "four edges' queues",
      env: 'POLICY_MAX_QUEUED_EPISODES',
    }),
  })
  .transform(
    (env): EdgeConfig => ({
      upstream: {
        // A fleet's first replica stands for the endpoint where one URL is needed (log lines).
        baseUrl: env.INFERENCE_REPLICAS?.[0] ?? env.INFERENCE_BASE_URL,
        ...(env.INFERENCE_API_KEY ? { apiKey: env.INFERENCE_API_KEY } : {}),
        requestTokenIds: env.INFERENCE_TOKEN_IDS,
        timeoutMs: env.INFERENCE_TIMEOUT_MS,
        maxReplyBytes: env.EPISODE_MAX_REPLY_BYTES,
      },
      apiKeys: env.EDGE_API_KEYS,
      recordKeys: env.EDGE_RECORD_KEYS,
      rolloutKeys: env.EDGE_ROLLOUT_KEYS,
      trustedProxies: env.EDGE_TRUSTED_PROXIES,
      authMaxFailures: env.EDGE_AUTH_MAX_FAILURES,
      ...(env.DEFAULT_MODEL ? { defaultModel: env.DEFAULT_MODEL } : {}),
      episodeConcurrency: env.EPISODE_CONCURRENCY,
      policyTimeoutMs: env.INFERENCE_TIMEOUT_MS,
      ...(env.SQL_DATABASE_URL ? { sqlDatabaseUrl: env.SQL_DATABASE_URL } : {}),
      episodes: {
        leaseSeconds: env.EPISODE_LEASE_SECONDS,
        sweepSeconds: env.EPISODE_SWEEP_SECONDS,
        maxResumes: env.EPISODE_MAX_RESUMES,
        maxAgeSeconds: env.EPISODE_MAX_AGE_SECONDS,
      },
      ...(env.EDGE_RUNNER ? { runner: env.EDGE_RUNNER } : {}),
      bounds: {
        maxToolCallsPerTurn: env.EPISODE_MAX_TOOL_CALLS,
        toolBudgetMs: env.EPISODE_TOOL_BUDGET_MS,
        maxReplyBytes: env.EPISODE_MAX_REPLY_BYTES,
        ...(env.POLICY_VOCAB_SIZE !== undefined ? { vocabSize: env.POLICY_VOCAB_SIZE } : {}),
      },
      admission: {
        maxQueuedPerEdge: env.EDGE_MAX_QUEUED_EPISODES,
        maxQueuedPerPolicy: env.POLICY_MAX_QUEUED_EPISODES,
      },
      ...(env.INFERENCE_REPLICAS && env.INFERENCE_REPLICAS.length > 0
        ? { fleet: { replicas: env.INFERENCE_REPLICAS, cacheMs: env.FLEET_CACHE_MS } }
        : {}),
    }),
  );

/** The variables the edge reads, in the schema's order, with their docs and defaults. */
export const edgeConfigFields = configFields(edgeConfigSchema);

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
  // Blank counts as unset, as a Worker binding or an exported-but-empty shell variable reads.
  const input: Record<string, string> = {};
  for (const { path } of edgeConfigFields) {
    const name = path.join('.');
    const value = env[name]?.trim();
    if (value) input[name] = value;
  }
  // A fleet needs no separate single URL: its first replica stands in (the Worker's bindings).
  const [firstReplica] = input.INFERENCE_REPLICAS ? parseReplicaList(input.INFERENCE_REPLICAS) : [];
  if (input.INFERENCE_BASE_URL === undefined && firstReplica) input.INFERENCE_BASE_URL = firstReplica;
  return parseConfig(edgeConfigSchema, input, (issues) => new EdgeConfigError(issues), 'path');
}
