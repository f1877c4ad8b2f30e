// `edgerl rollout`: starts rollout groups through a running edge's API (Node or Workers) and shows
// their progress until every group has ended. Talks HTTP only, so it works against any deployment.
import { groupStatuses, taskSplits } from '../../protocol/statuses.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';

interface GroupView {
  readonly group: { readonly id: string; readonly status: string; readonly size: number };
  readonly progress: Readonly<Record<string, number>>;
  readonly trajectories: readonly {
    readonly id: string;
    readonly status: string;
    readonly finalReward?: number | null;
    readonly verifierReward: number | null;
    readonly errorReason: string | null;
  }[];
}

/** Group statuses after `running`: the episodes are over. */
const endedGroup = new Set<string>(groupStatuses.filter((status) => status !== 'running'));

export const rolloutCommand = defineCommand({
  usage: `Usage: edgerl rollout --env NAME --groups G --size N [options]

Starts G groups of N episodes each (POST /v1/rollouts), then polls each group until all have
ended, printing progress and each group's mean verifier reward. Exit status 1 if a group failed,
an episode ended in error (an infrastructure failure: the endpoint, the store; a line names how
many and the first reason) or the wait timed out. With --json, progress goes to stderr and stdout
gets one JSON document when the wait ends: each group's id, model, arm, status, mean verifier
reward and trajectories (id, status, rewards, error reason).

Options:
  --env NAME          environment (multi-hop, sql-agent, …)
  --groups G          groups to start (default 1)
  --size N            episodes per group (GRPO's G; default 8)
  --policy V          a policy name (its default version) or a version's served name (agent@7)
  --experiment E      an experiment's name or id: its arms split the groups by weight
  --split S           train | eval | validation (default train); each group samples a new task
  --max-tokens N      completion tokens per turn
  --temperature T     sampling temperature (default: the edge's, 1)
  --edge-url URL      the edge (default EDGERL_EDGE_URL, else http://127.0.0.1:8787)
  --api-key KEY       bearer key (default EDGERL_EDGE_API_KEY, else the first of EDGERL_EDGE_API_KEYS)
  --timeout S         give up waiting after S seconds (default 3600)
  --interval MS       polling interval (default 1000)
  --json              print the result as one JSON document (progress on stderr)`,
  options: {
    env: { type: 'string' },
    groups: { type: 'string' },
    size: { type: 'string' },
    policy: { type: 'string' },
    experiment: { type: 'string' },
    split: { type: 'string' },
    'max-tokens': { type: 'string' },
    temperature: { type: 'string' },
    'edge-url': { type: 'string' },
    'api-key': { type: 'string' },
    timeout: { type: 'string' },
    interval: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, env, stdout, stderr }) {
    const json = values.json === true;
    // With --json stdout holds the one document; the progress a person watches goes to stderr.
    const progress = json ? stderr : stdout;
    const environment = stringFlag(values, 'env');
    if (!environment) throw new UsageError('--env NAME is required');
    const groups = intFlag(values, 'groups', 1, { min: 1, max: 10_000 });
    const size = intFlag(values, 'size', 8, { min: 1, max: 256 });
    const policy = stringFlag(values, 'policy');
    const experiment = stringFlag(values, 'experiment');
    if (policy && experiment) throw new UsageError('choose one of --policy and --experiment');
    const split = stringFlag(values, 'split');
    if (split !== undefined && !taskSplits.some((known) => known === split))
      throw new UsageError(`--split must be one of ${taskSplits.join(', ')}, got "${split}"`);
    const temperatureText = stringFlag(values, 'temperature');
    const temperature = temperatureText === undefined ? undefined : Number(temperatureText);
    if (temperature !== undefined && !(temperature >= 0 && temperature <= 2))
      throw new UsageError(`--temperature must be a number in [0, 2], got "${temperatureText}"`);
    const maxTokensText = stringFlag(values, 'max-tokens');
    const maxTokens =
      maxTokensText === undefined ? undefined : intFlag(values, 'max-tokens', 0, { min: 1, max: 32_768 });
    const base = (stringFlag(values, 'edge-url') ?? (env.EDGERL_EDGE_URL || 'http://127.0.0.1:8787')).replace(
      /\/+$/,
      '',
    );
    const apiKey =
      stringFlag(values, 'api-key') ??
      (env.EDGERL_EDGE_API_KEY || env.EDGERL_EDGE_API_KEYS?.split(',')[0]?.trim() || undefined);
    if (!apiKey) throw new UsageError('no API key: pass --api-key or set EDGERL_EDGE_API_KEY');
    const timeoutMs = intFlag(values, 'timeout', 3600, { min: 1 }) * 1000;
    const intervalMs = intFlag(values, 'interval', 1000, { min: 10, max: 60_000 });

    const call = async (path: string, body?: unknown): Promise<unknown> => {
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      } catch (error) {
        const cause =
          error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
        throw new Error(`cannot reach the edge at ${base}: ${String(error)}${cause}`);
      }
      const json = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
      if (!response.ok)
        throw new Error(`${path}: HTTP ${response.status}: ${json.error?.message ?? 'no details'}`);
      return json;
    };

    const started: { groupId: string; model: string; arm: string | null }[] = [];
    for (let n = 0; n < groups; n++) {
      const result = (await call('/v1/rollouts', {
        env: environment,
        groupSize: size,
        ...(split ? { split } : {}),
        ...(policy ? { policy } : {}),
        ...(experiment ? { experiment } : {}),
        ...(temperature !== undefined || maxTokens !== undefined
          ? {
              settings: {
                ...(temperature !== undefined ? { temperature } : {}),
                ...(maxTokens ? { maxTokens } : {}),
              },
            }
          : {}),
      })) as { groupId: string; model: string; arm: string | null };
      started.push(result);
      progress.write(
        `started group ${result.groupId} (${size} × ${environment}, model ${result.model}${result.arm ? `, arm ${result.arm}` : ''})\n`,
      );
    }

    const deadline = Date.now() + timeoutMs;
    const last = new Map<string, string>();
    const finished = new Map<string, GroupView>();
    while (finished.size < started.length && Date.now() < deadline) {
      for (const { groupId } of started) {
        if (finished.has(groupId)) continue;
        const view = (await call(`/v1/groups/${groupId}`)) as GroupView;
        const line = progressLine(view);
        if (last.get(groupId) !== line) progress.write(`${line}\n`);
        last.set(groupId, line);
        if (endedGroup.has(view.group.status)) finished.set(groupId, view);
      }
      if (finished.size < started.length) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }

    const report = rolloutReport(started, finished, started.length * size);
    if (json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else stdout.write(formatRolloutReport(report, timeoutMs));
    const failures = report.groups.filter((group) => group.status === 'failed' || group.timedOut).length;
    return failures > 0 || report.erroredEpisodes > 0 ? 1 : 0;
  },
});

/** What `rollout` reports when the wait ends: the document --json prints, and the text's source. */
export interface RolloutReport {
  readonly groups: readonly {
    readonly groupId: string;
    readonly model: string;
    readonly arm: string | null;
    /** The group's status, or `running` when the wait timed out first. */
    readonly status: string;
    readonly timedOut: boolean;
    /** Null when no trajectory has a verifier reward. */
    readonly meanVerifierReward: number | null;
    readonly trajectories: readonly {
      readonly id: string;
      readonly status: string;
      readonly verifierReward: number | null;
      readonly finalReward: number | null;
      readonly errorReason: string | null;
    }[];
  }[];
  readonly episodes: number;
  /** Episodes that ended in error: infrastructure failures, left out of training. */
  readonly erroredEpisodes: number;
  readonly firstErrorReason: string | null;
}

function rolloutReport(
  started: readonly { groupId: string; model: string; arm: string | null }[],
  finished: ReadonlyMap<string, GroupView>,
  episodes: number,
): RolloutReport {
  const groups = started.map(({ groupId, model, arm }) => {
    const view = finished.get(groupId);
    const trajectories = (view?.trajectories ?? []).map((t) => ({
      id: t.id,
      status: t.status,
      verifierReward: t.verifierReward,
      finalReward: t.finalReward ?? null,
      errorReason: t.errorReason,
    }));
    const rewards = trajectories.map((t) => t.verifierReward).filter((r): r is number => r !== null);
    return {
      groupId,
      model,
      arm,
      status: view?.group.status ?? 'running',
      timedOut: view === undefined,
      meanVerifierReward: rewards.length > 0 ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
      trajectories,
    };
  });
  const errored = groups.flatMap((group) => group.trajectories.filter((t) => t.status === 'error'));
  return {
    groups,
    episodes,
    erroredEpisodes: errored.length,
    firstErrorReason: errored.length > 0 ? (errored[0]?.errorReason ?? 'no reason recorded') : null,
  };
}

function formatRolloutReport(report: RolloutReport, timeoutMs: number): string {
  const lines = [''];
  for (const group of report.groups) {
    if (group.timedOut) {
      lines.push(`group ${group.groupId}: still running after ${timeoutMs / 1000} s`);
      continue;
    }
    const rewarded = group.trajectories.filter((t) => t.verifierReward !== null).length;
    const mean = group.meanVerifierReward === null ? 'n/a' : group.meanVerifierReward.toFixed(3);
    lines.push(`group ${group.groupId}: ${group.status}, mean verifier reward ${mean} over ${rewarded}`);
  }
  if (report.erroredEpisodes > 0) {
    lines.push(
      `${report.erroredEpisodes} of ${report.episodes} episode(s) ended in error (not the model's doing: they are left out of training); the first: ${report.firstErrorReason}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function progressLine(view: GroupView): string {
  const { progress, group } = view;
  const counts = ['finished', 'truncated', 'error']
    .map((status) => `${status} ${progress[status] ?? 0}`)
    .join(', ');
  return `group ${group.id}: ${progress.ended ?? 0}/${group.size} ended (${counts}) — ${group.status}`;
}
