// The edge's configuration as a zod schema over the variables it reads (Worker env bindings, or
// process.env and flags in Node), each default written once beside its doc; the checks say how to
// fix a bad value. Modules get the slices they need; nothing else reads the environment.
import { z } from 'zod';
import { configFields, documented, parseConfig } from '../protocol/config-docs.ts';
import { ConfigError } from '../protocol/config-error.ts';
import { deprecationLine, withCurrentVariables } from '../protocol/config-renames.ts';
import { guessLimitDefaults } from '../protocol/guess-limiter.ts';
import type { UpstreamEndpoint } from './proxy/upstream.ts';
import { parseReplicaList, replicaUrlProblem } from '../protocol/replica-url.ts';
import type { FleetSettings } from './routing/replica-router.ts';
import { type EpisodeLeaseSettings, episodeLeaseDefaults } from './rollouts/episode-leases.ts';
import { episodeBoundDefaults } from './episode/episode-defaults.ts';
import { type AdmissionLimits, admissionDefaults } from './rollouts/admit-episodes.ts';

export interface EdgeConfig {
  readonly upstream: UpstreamEndpoint;
  /** Keys with every scope (EDGERL_EDGE_API_KEYS): the console, and all of /v1. */
  readonly apiKeys: readonly string[];
  /** Keys with the record scope only (EDGERL_EDGE_RECORD_KEYS); absent: none. */
  readonly recordKeys?: readonly string[];
  /** Keys with the rollout scope, which includes record (EDGERL_EDGE_ROLLOUT_KEYS); absent: none. */
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
  /** The inference fleet (EDGERL_INFERENCE_REPLICAS); absent: the one endpoint of `upstream`. */
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

/** `edgerl serve-model`'s default address: where `edgerl edge` points when EDGERL_INFERENCE_URL is unset. */
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

/** A comma-separated key list, blanks dropped (EDGERL_EDGE_API_KEYS' parsing, for the scoped lists too). */
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
    EDGERL_INFERENCE_URL: documented(
      z.string({ error: baseUrlMessage }).regex(/^https?:\/\/[^/]/, { error: baseUrlMessage }),
      {
        doc: 'OpenAI-compatible inference endpoint up to /v1: vLLM, `edgerl serve-model`; as the trainer reads it, several (repeated, or comma-separated) are a fleet, as --replicas',
        shownDefault: `in Node ${localInferenceUrl}, where \`edgerl serve-model\` listens`,
        flag: 'inference-url',
        arg: 'URL',
        repeatable: true,
        env: 'EDGERL_INFERENCE_URL',
        section,
      },
    ),
    EDGERL_INFERENCE_REPLICAS: documented(
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
        doc: "the inference fleet, comma-separated base URLs up to /v1 (the trainer's --inference-url list); a version's requests go only to the replicas that hold it; replaces EDGERL_INFERENCE_URL",
        shownDefault: 'none: EDGERL_INFERENCE_URL alone',
        flag: 'replicas',
        arg: 'URLS',
        env: 'EDGERL_INFERENCE_REPLICAS',
        section,
      },
    ),
    EDGERL_FLEET_CACHE_MS: documented(positiveIntText().default(1000), {
      doc: "with EDGERL_INFERENCE_REPLICAS: how long a model's replicas read from the store are reused, in ms",
      source:
        'an edgerl choice: a commit or a quarantine reaches routing within a second, at one store read a second per model',
      env: 'EDGERL_FLEET_CACHE_MS',
    }),
    EDGERL_INFERENCE_API_KEY: documented(z.string().optional(), {
      doc: 'bearer key for the inference endpoint; local servers need none',
      env: 'EDGERL_INFERENCE_API_KEY',
    }),
    EDGERL_INFERENCE_TOKEN_IDS: documented(
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
        env: 'EDGERL_INFERENCE_TOKEN_IDS',
      },
    ),
    EDGERL_INFERENCE_TIMEOUT_MS: documented(positiveIntText().default(120_000), {
      doc: 'one inference call, in ms; the episode loop retries timeouts',
      source: 'a long agent turn on a loaded vLLM server',
      env: 'EDGERL_INFERENCE_TIMEOUT_MS',
    }),
    EDGERL_EDGE_API_KEYS: documented(
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
        env: 'EDGERL_EDGE_API_KEYS',
        section,
      },
    ),
    EDGERL_EDGE_RECORD_KEYS: documented(keyList().default([]), {
      doc: 'bearer keys with the record scope only: the recording proxy, client trajectories, ingest, reading trajectories',
      shownDefault: 'none',
      env: 'EDGERL_EDGE_RECORD_KEYS',
    }),
    EDGERL_EDGE_ROLLOUT_KEYS: documented(keyList().default([]), {
      doc: 'bearer keys with the rollout scope: POST /v1/rollouts, /v1/groups, and everything record may do',
      shownDefault: 'none',
      env: 'EDGERL_EDGE_ROLLOUT_KEYS',
    }),
    EDGERL_EDGE_AUTH_MAX_FAILURES: documented(positiveIntText().default(guessLimitDefaults.maxFailures), {
      doc: 'wrong API keys a client address may send within a minute before it gets 429 (backoff doubling to 15 min)',
      source:
        'a person retrying a mistyped key gets there in five; a guesser gets five a minute, not hundreds a second',
      env: 'EDGERL_EDGE_AUTH_MAX_FAILURES',
    }),
    EDGERL_EDGE_TRUSTED_PROXIES: documented(
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
        env: 'EDGERL_EDGE_TRUSTED_PROXIES',
      },
    ),
    EDGERL_DEFAULT_MODEL: documented(z.string().optional(), {
      doc: 'policy or model for requests naming neither a policy nor an experiment',
      flag: 'default-model',
      arg: 'NAME',
      env: 'EDGERL_DEFAULT_MODEL',
      section,
    }),
    EDGERL_SQL_DATABASE_URL: documented(
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
        env: 'EDGERL_SQL_DATABASE_URL',
        section,
      },
    ),
    EDGERL_EPISODE_CONCURRENCY: documented(positiveIntText().default(8), {
      doc: 'Node: episodes running at once',
      source: 'keeps one inference server busy without starving the edge of its event loop',
      flag: 'concurrency',
      arg: 'N',
      env: 'EDGERL_EPISODE_CONCURRENCY',
      section,
    }),
    EDGERL_EPISODE_LEASE_SECONDS: documented(positiveIntText().default(episodeLeaseDefaults.leaseSeconds), {
      doc: 'seconds a runner holds an episode without storing a turn; it beats every third of it',
      source: 'a killed edge is taken over within a minute (an edgerl choice); etcd renews at TTL/3',
      env: 'EDGERL_EPISODE_LEASE_SECONDS',
    }),
    EDGERL_EPISODE_SWEEP_SECONDS: documented(positiveIntText().default(episodeLeaseDefaults.sweepSeconds), {
      doc: 'Node: seconds between sweeps that resume or end stale episodes (Workers: the cron)',
      source: "Cloudflare cron triggers' one-minute granularity",
      env: 'EDGERL_EPISODE_SWEEP_SECONDS',
    }),
    EDGERL_EPISODE_MAX_RESUMES: documented(
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
        env: 'EDGERL_EPISODE_MAX_RESUMES',
      },
    ),
    EDGERL_EPISODE_MAX_AGE_SECONDS: documented(
      positiveIntText().default(episodeLeaseDefaults.maxAgeSeconds),
      {
        doc: 'a stale episode started longer ago than this (seconds) is ended instead of resumed',
        source: 'a day (an edgerl choice)',
        env: 'EDGERL_EPISODE_MAX_AGE_SECONDS',
      },
    ),
    EDGERL_EDGE_RUNNER: documented(z.string().min(1).max(200).optional(), {
      doc: "Node: this edge's stable name on its episode leases; a restart under it resumes them at once",
      shownDefault: 'edge@<host>:<port>',
      flag: 'runner',
      arg: 'NAME',
      env: 'EDGERL_EDGE_RUNNER',
      section,
    }),
    EDGERL_EPISODE_MAX_TOOL_CALLS: documented(
      positiveIntText().default(episodeBoundDefaults.maxToolCallsPerTurn),
      {
        doc: "tool calls run per assistant turn; the rest of a reply's calls get one refusal observation",
        source: 'more than any shipped environment makes in a turn (they make one or two)',
        env: 'EDGERL_EPISODE_MAX_TOOL_CALLS',
      },
    ),
    EDGERL_EPISODE_TOOL_BUDGET_MS: documented(positiveIntText().default(episodeBoundDefaults.toolBudgetMs), {
      doc: 'tool (SQL sandbox) time one episode may spend, in ms; past it calls get a refusal observation',
      source: "six full tool timeouts (10 s each); sql-agent's eight turns of ordinary queries take seconds",
      env: 'EDGERL_EPISODE_TOOL_BUDGET_MS',
    }),
    EDGERL_EPISODE_MAX_REPLY_BYTES: documented(
      positiveIntText().default(episodeBoundDefaults.maxReplyBytes),
      {
        doc: 'bytes of one policy reply (content + tool-call arguments); a larger one ends the episode error; the policy client and the recording proxy stop reading a response body at 32× it',
        source: 'the default 512 completion tokens are ~2 KB; a 32k-token turn is under 200 KB',
        env: 'EDGERL_EPISODE_MAX_REPLY_BYTES',
      },
    ),
    EDGERL_POLICY_VOCAB_SIZE: documented(positiveIntText().optional(), {
      doc: "the policy's vocabulary size: a sampled token id must be below it (the model's config.json vocab_size)",
      shownDefault: 'unset: ids are only held below 2^31 (the int4 column)',
      env: 'EDGERL_POLICY_VOCAB_SIZE',
    }),
    EDGERL_EDGE_MAX_QUEUED_EPISODES: documented(
      positiveIntText().default(admissionDefaults.maxQueuedPerEdge),
      {
        doc: "Node: episodes waiting in this edge's queue above which POST /v1/rollouts answers 429 with Retry-After",
        source: 'one largest group (256) fits; about 16 minutes of work at the default concurrency',
        env: 'EDGERL_EDGE_MAX_QUEUED_EPISODES',
      },
    ),
    EDGERL_POLICY_MAX_QUEUED_EPISODES: documented(
      positiveIntText().default(admissionDefaults.maxQueuedPerPolicy),
      {
        doc: "a policy's rollout episodes queued or running (all edges, in the store) above which POST /v1/rollouts and /v1/groups answer 429",
        source: "four edges' queues",
        env: 'EDGERL_POLICY_MAX_QUEUED_EPISODES',
      },
    ),
  })
  .transform(
    (env): EdgeConfig => ({
      upstream: {
        // A fleet's first replica stands for the endpoint where one URL is needed (log lines).
        baseUrl: env.EDGERL_INFERENCE_REPLICAS?.[0] ?? env.EDGERL_INFERENCE_URL,
        ...(env.EDGERL_INFERENCE_API_KEY ? { apiKey: env.EDGERL_INFERENCE_API_KEY } : {}),
        requestTokenIds: env.EDGERL_INFERENCE_TOKEN_IDS,
        timeoutMs: env.EDGERL_INFERENCE_TIMEOUT_MS,
        maxReplyBytes: env.EDGERL_EPISODE_MAX_REPLY_BYTES,
      },
      apiKeys: env.EDGERL_EDGE_API_KEYS,
      recordKeys: env.EDGERL_EDGE_RECORD_KEYS,
      rolloutKeys: env.EDGERL_EDGE_ROLLOUT_KEYS,
      trustedProxies: env.EDGERL_EDGE_TRUSTED_PROXIES,
      authMaxFailures: env.EDGERL_EDGE_AUTH_MAX_FAILURES,
      ...(env.EDGERL_DEFAULT_MODEL ? { defaultModel: env.EDGERL_DEFAULT_MODEL } : {}),
      episodeConcurrency: env.EDGERL_EPISODE_CONCURRENCY,
      policyTimeoutMs: env.EDGERL_INFERENCE_TIMEOUT_MS,
      ...(env.EDGERL_SQL_DATABASE_URL ? { sqlDatabaseUrl: env.EDGERL_SQL_DATABASE_URL } : {}),
      episodes: {
        leaseSeconds: env.EDGERL_EPISODE_LEASE_SECONDS,
        sweepSeconds: env.EDGERL_EPISODE_SWEEP_SECONDS,
        maxResumes: env.EDGERL_EPISODE_MAX_RESUMES,
        maxAgeSeconds: env.EDGERL_EPISODE_MAX_AGE_SECONDS,
      },
      ...(env.EDGERL_EDGE_RUNNER ? { runner: env.EDGERL_EDGE_RUNNER } : {}),
      bounds: {
        maxToolCallsPerTurn: env.EDGERL_EPISODE_MAX_TOOL_CALLS,
        toolBudgetMs: env.EDGERL_EPISODE_TOOL_BUDGET_MS,
        maxReplyBytes: env.EDGERL_EPISODE_MAX_REPLY_BYTES,
        ...(env.EDGERL_POLICY_VOCAB_SIZE !== undefined ? { vocabSize: env.EDGERL_POLICY_VOCAB_SIZE } : {}),
      },
      admission: {
        maxQueuedPerEdge: env.EDGERL_EDGE_MAX_QUEUED_EPISODES,
        maxQueuedPerPolicy: env.EDGERL_POLICY_MAX_QUEUED_EPISODES,
      },
      ...(env.EDGERL_INFERENCE_REPLICAS && env.EDGERL_INFERENCE_REPLICAS.length > 0
        ? { fleet: { replicas: env.EDGERL_INFERENCE_REPLICAS, cacheMs: env.EDGERL_FLEET_CACHE_MS } }
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

/** Whether this isolate (or process) has said which former variable names it read. */
let warnedOfFormerNames = false;

/** The Worker's deprecation line: once per isolate, as its env is fixed for the isolate's life. */
function warnOnce(line: string): void {
  if (warnedOfFormerNames) return;
  warnedOfFormerNames = true;
  console.warn(`edgerl edge: ${line}`);
}

/**
 * Throws one error listing every problem, each with the variable's name and what it should hold.
 * Former names (protocol/config-renames.ts) are read too, and `warn` gets one line naming them; the
 * CLI has already rewritten its env, so only the Worker's bindings can still hold them.
 */
export function edgeConfigFromEnv(given: Env, warn: (line: string) => void = warnOnce): EdgeConfig {
  const { env, renamed } = withCurrentVariables(given);
  const deprecated = deprecationLine(renamed);
  if (deprecated) warn(deprecated);
  // Blank counts as unset, as a Worker binding or an exported-but-empty shell variable reads.
  const input: Record<string, string> = {};
  for (const { path } of edgeConfigFields) {
    const name = path.join('.');
    const value = env[name]?.trim();
    if (value) input[name] = value;
  }
  // Several inference URLs (the trainer's comma-separated EDGERL_INFERENCE_URL) are the fleet.
  const urls = input.EDGERL_INFERENCE_URL ? parseReplicaList(input.EDGERL_INFERENCE_URL) : [];
  if (urls.length > 1 && input.EDGERL_INFERENCE_REPLICAS === undefined) {
    input.EDGERL_INFERENCE_REPLICAS = urls.join(',');
    delete input.EDGERL_INFERENCE_URL;
  }
  // A fleet needs no separate single URL: its first replica stands in (the Worker's bindings).
  const [firstReplica] = input.EDGERL_INFERENCE_REPLICAS
    ? parseReplicaList(input.EDGERL_INFERENCE_REPLICAS)
    : [];
  if (input.EDGERL_INFERENCE_URL === undefined && firstReplica) input.EDGERL_INFERENCE_URL = firstReplica;
  return parseConfig(edgeConfigSchema, input, (issues) => new EdgeConfigError(issues), 'path');
}
