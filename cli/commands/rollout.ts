// `edgerl rollout`: starts rollout groups through a running edge's API (Node or Workers) and shows
// their progress until every group has ended. Talks HTTP only, so it works against any deployment.
import { groupStatuses, taskSplits } from '../../protocol/statuses.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';

interface GroupView {
  readonly group: { readonly id: string; readonly status: string; readonly size: number };
  readonly progress: Readonly<Record<string, number>>;
  readonly trajectories: readonly {
    readonly status: string;
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
many and the first reason) or the wait timed out.

Options:
  --env NAME          environment (multi-hop, sql-agent, …)
  --groups G          groups to start (default 1)
  --size N            episodes per group (GRPO's G; default 8)
  --policy V          a policy name (its default version) or a version's served name (agent@7)
  --experiment E      an experiment's name or id: its arms split the groups by weight
  --split S           train | eval | validation (default train); each group samples a new task
  --max-tokens N      completion tokens per turn
  --temperature T     sampling temperature (default: the edge's, 1)
  --url URL           the edge (default EDGERL_EDGE_URL, else http://127.0.0.1:8787)
  --api-key KEY       bearer key (default EDGE_API_KEY, else the first of EDGE_API_KEYS)
  --timeout S         give up waiting after S seconds (default 3600)
  --interval MS       polling interval (default 1000)`,
  options: {
    env: { type: 'string' },
    groups: { type: 'string' },
    size: { type: 'string' },
    policy: { type: 'string' },
    experiment: { type: 'string' },
    split: { type: 'string' },
    'max-tokens': { type: 'string' },
    temperature: { type: 'string' },
    url: { type: 'string' },
    'api-key': { type: 'string' },
    timeout: { type: 'string' },
    interval: { type: 'string' },
  },
  async run({ values, env, stdout }) {
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
    const base = (stringFlag(values, 'url') ?? (env.EDGERL_EDGE_URL || 'http://127.0.0.1:8787')).replace(
      /\/+$/,
      '',
    );
    const apiKey =
      stringFlag(values, 'api-key') ??
      (env.EDGE_API_KEY || env.EDGE_API_KEYS?.split(',')[0]?.trim() || undefined);
    if (!apiKey) throw new UsageError('no API key: pass --api-key or set EDGE_API_KEY');
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
      stdout.write(
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
        if (last.get(groupId) !== line) stdout.write(`${line}\n`);
        last.set(groupId, line);
        if (endedGroup.has(view.group.status)) finished.set(groupId, view);
      }
      if (finished.size < started.length) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }

    let failures = 0;
    const errored: GroupView['trajectories'][number][] = [];
    stdout.write('\n');
    for (const { groupId } of started) {
      const view = finished.get(groupId);
      if (!view) {
        failures += 1;
        stdout.write(`group ${groupId}: still running after ${timeoutMs / 1000} s\n`);
        continue;
      }
      if (view.group.status === 'failed') failures += 1;
      errored.push(...view.trajectories.filter((t) => t.status === 'error'));
      const rewards = view.trajectories.map((t) => t.verifierReward).filter((r): r is number => r !== null);
      const mean =
        rewards.length > 0 ? (rewards.reduce((a, b) => a + b, 0) / rewards.length).toFixed(3) : 'n/a';
      stdout.write(
        `group ${groupId}: ${view.group.status}, mean verifier reward ${mean} over ${rewards.length}\n`,
      );
    }
    if (errored.length > 0) {
      const first = errored[0]?.errorReason ?? 'no reason recorded';
      stdout.write(
        `${errored.length} of ${started.length * size} episode(s) ended in error (not the model's doing: they are left out of training); the first: ${first}\n`,
      );
    }
    return failures > 0 || errored.length > 0 ? 1 : 0;
  },
});

function progressLine(view: GroupView): string {
  const { progress, group } = view;
  const counts = ['finished', 'truncated', 'error']
    .map((status) => `${status} ${progress[status] ?? 0}`)
    .join(', ');
  return `group ${group.id}: ${progress.ended ?? 0}/${group.size} ended (${counts}) — ${group.status}`;
}
