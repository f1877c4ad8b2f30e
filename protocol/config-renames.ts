// The one table of renamed settings: every former environment variable and flag with its current
// name, and the rewrite that lets a process read the current names only while the former ones still
// work. Each process entry (the CLI's main, the Worker's edgeConfigFromEnv) applies it once and prints
// the one deprecation line `deprecationLine` makes. Which variables exist is each config's schema.

/**
 * Former variable → current. The rule: an edgerl setting is `EDGERL_` + its name; DATABASE_URL stays
 * unprefixed (the platform-wide name, and the Worker secret). The edge's inference URL is the
 * trainer's variable, EDGERL_INFERENCE_URL, so one value serves both.
 */
export const renamedVariables = {
  INFERENCE_BASE_URL: 'EDGERL_INFERENCE_URL',
  INFERENCE_REPLICAS: 'EDGERL_INFERENCE_REPLICAS',
  INFERENCE_API_KEY: 'EDGERL_INFERENCE_API_KEY',
  INFERENCE_TOKEN_IDS: 'EDGERL_INFERENCE_TOKEN_IDS',
  INFERENCE_TIMEOUT_MS: 'EDGERL_INFERENCE_TIMEOUT_MS',
  FLEET_CACHE_MS: 'EDGERL_FLEET_CACHE_MS',
  EDGE_API_KEYS: 'EDGERL_EDGE_API_KEYS',
  EDGE_API_KEY: 'EDGERL_EDGE_API_KEY',
  EDGE_RECORD_KEYS: 'EDGERL_EDGE_RECORD_KEYS',
  EDGE_ROLLOUT_KEYS: 'EDGERL_EDGE_ROLLOUT_KEYS',
  EDGE_AUTH_MAX_FAILURES: 'EDGERL_EDGE_AUTH_MAX_FAILURES',
  EDGE_TRUSTED_PROXIES: 'EDGERL_EDGE_TRUSTED_PROXIES',
  EDGE_RUNNER: 'EDGERL_EDGE_RUNNER',
  EDGE_MAX_QUEUED_EPISODES: 'EDGERL_EDGE_MAX_QUEUED_EPISODES',
  DEFAULT_MODEL: 'EDGERL_DEFAULT_MODEL',
  SQL_DATABASE_URL: 'EDGERL_SQL_DATABASE_URL',
  EPISODE_CONCURRENCY: 'EDGERL_EPISODE_CONCURRENCY',
  EPISODE_LEASE_SECONDS: 'EDGERL_EPISODE_LEASE_SECONDS',
  EPISODE_SWEEP_SECONDS: 'EDGERL_EPISODE_SWEEP_SECONDS',
  EPISODE_MAX_RESUMES: 'EDGERL_EPISODE_MAX_RESUMES',
  EPISODE_MAX_AGE_SECONDS: 'EDGERL_EPISODE_MAX_AGE_SECONDS',
  EPISODE_MAX_TOOL_CALLS: 'EDGERL_EPISODE_MAX_TOOL_CALLS',
  EPISODE_TOOL_BUDGET_MS: 'EDGERL_EPISODE_TOOL_BUDGET_MS',
  EPISODE_MAX_REPLY_BYTES: 'EDGERL_EPISODE_MAX_REPLY_BYTES',
  POLICY_VOCAB_SIZE: 'EDGERL_POLICY_VOCAB_SIZE',
  POLICY_MAX_QUEUED_EPISODES: 'EDGERL_POLICY_MAX_QUEUED_EPISODES',
  JUDGE_BASE_URL: 'EDGERL_JUDGE_BASE_URL',
  JUDGE_API_KEY: 'EDGERL_JUDGE_API_KEY',
  JUDGE_MODEL: 'EDGERL_JUDGE_MODEL',
  JUDGE_TIMEOUT_MS: 'EDGERL_JUDGE_TIMEOUT_MS',
  JUDGE_MAX_RETRIES: 'EDGERL_JUDGE_MAX_RETRIES',
  JUDGE_ORDERINGS: 'EDGERL_JUDGE_ORDERINGS',
  JUDGE_SEED: 'EDGERL_JUDGE_SEED',
  JUDGE_TEMPERATURE: 'EDGERL_JUDGE_TEMPERATURE',
  JUDGE_PRICE_PROMPT_PER_MTOK: 'EDGERL_JUDGE_PRICE_PROMPT_PER_MTOK',
  JUDGE_PRICE_COMPLETION_PER_MTOK: 'EDGERL_JUDGE_PRICE_COMPLETION_PER_MTOK',
  RULER_JUDGE_WEIGHT: 'EDGERL_RULER_JUDGE_WEIGHT',
  RULER_VERIFIER_WEIGHT: 'EDGERL_RULER_VERIFIER_WEIGHT',
} as const satisfies Record<string, `EDGERL_${string}`>;

/**
 * Current flag → its former spelling, without dashes. Keyed by the current flag because `--url`
 * meant the store on the store commands and the edge on `rollout`: a command declares one of the two.
 */
export const formerFlags: Readonly<Record<string, string>> = {
  'database-url': 'url',
  'edge-url': 'url',
};

export type Rename = readonly [former: string, current: string];

type Env = Readonly<Record<string, string | undefined>>;

/**
 * `env` with each current name that is unset (or blank) filled from its former name, and the renames
 * that happened. A current name that is set wins; the former is then ignored and not reported.
 */
export function withCurrentVariables<E extends Env>(env: E): { env: E; renamed: Rename[] } {
  const current: Record<string, string | undefined> = { ...env };
  const renamed: Rename[] = [];
  for (const [former, name] of Object.entries(renamedVariables)) {
    const value = env[former];
    if (value === undefined || value.trim() === '' || env[name]?.trim()) continue;
    current[name] = value;
    renamed.push([former, name]);
  }
  return { env: current as E, renamed };
}

/**
 * `args` with each former flag (`--url`, `--url=…`) spelled as the current one the command declares
 * (`known`); a former flag the command still declares itself is left alone.
 */
export function withCurrentFlags(
  args: readonly string[],
  known: ReadonlySet<string>,
): { args: string[]; renamed: Rename[] } {
  const renamed: Rename[] = [];
  // Arguments after `--` are positionals, never flags: they are kept exactly as given.
  const end = args.indexOf('--');
  const flags = end < 0 ? args : args.slice(0, end);
  const rewritten = flags.map((arg) => {
    const match = /^--([^=]+)(=.*)?$/.exec(arg);
    const given = match?.[1];
    if (given === undefined || known.has(given)) return arg;
    const current = [...known].find((flag) => formerFlags[flag] === given);
    if (current === undefined) return arg;
    if (!renamed.some(([former]) => former === `--${given}`)) renamed.push([`--${given}`, `--${current}`]);
    return `--${current}${match?.[2] ?? ''}`;
  });
  return { args: end < 0 ? rewritten : [...rewritten, ...args.slice(end)], renamed };
}

/** The one line a process prints for the former names it was given; undefined when none. */
export function deprecationLine(renamed: readonly Rename[]): string | undefined {
  if (renamed.length === 0) return undefined;
  const pairs = renamed.map(([former, current]) => `${former} → ${current}`).join(', ');
  return `deprecated names, still read for now: ${pairs}`;
}
