// RULER for one group: validate, look in the cache, judge the group (once if all its trajectories are
// identical, else in K seeded orders with bounded retries each), map labels back to trajectory ids,
// average, flag a group without spread, and cache the result. Judge failures come back as an
// `unscored` result with the reason; they are never replaced by made-up scores. Storing is the
// caller's job (score-and-record.ts).
import { formatIssues } from '../../protocol/format-issues.ts';
import { realSleep } from '../../protocol/openai/real-sleep.ts';
import { buildJudgePrompt, JUDGE_PROMPT_VERSION } from './build-judge-prompt.ts';
import { canonicalJson } from '../../protocol/canonical-json.ts';
import { DEFAULT_RUBRIC } from './default-rubric.ts';
import { groupHash as hashGroup, rubricHash as hashRubric } from './group-hash.ts';
import type { JudgeClient } from './judge-client.ts';
import { type JudgeGroup, judgeGroupSchema, type JudgeTrajectory } from './judge-group.ts';
import { judgeRetryPolicy, judgeWithRetries } from './judge-with-retries.ts';
import type { LabelScore } from './parse-judge-answer.ts';
import { type JudgeOrdering, planOrderings } from './plan-orderings.ts';
import type { RulerCache } from './ruler-cache.ts';
import type { RulerConfig } from './ruler-config.ts';
import type { ScoredGroup, ScoreGroupResult, TrajectoryScore } from './score-group-result.ts';
import { estimateCostUsd, sumUsage, type UsageTally } from './usage-tally.ts';

export interface ScoreGroupDeps {
  readonly config: RulerConfig;
  readonly client: JudgeClient;
  readonly cache?: RulerCache;
  /** Waits between retries; injectable so tests need not wait. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly signal?: AbortSignal;
}

/** The group handed to `scoreGroup` is malformed (empty, duplicate ids, bad messages). */
export class RulerInputError extends Error {
  override readonly name = 'RulerInputError';
  readonly code = 'ruler-input';
}

export async function scoreGroup(input: JudgeGroup, deps: ScoreGroupDeps): Promise<ScoreGroupResult> {
  const parsed = judgeGroupSchema.safeParse(input);
  if (!parsed.success) {
    const where = input.groupId ? ` ${input.groupId}` : '';
    throw new RulerInputError(`cannot score group${where}: ${formatIssues(parsed.error)}`);
  }
  const group = parsed.data;
  const { config, client, cache } = deps;
  const rubric = group.rubric ?? config.rubric ?? DEFAULT_RUBRIC;
  // A canonical order (by id) makes the judging independent of how the caller listed the group.
  const canonical = [...group.trajectories].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const firstText = canonicalJson(canonical[0]?.messages);
  const identical = canonical.every((t) => canonicalJson(t.messages) === firstText);

  const rubricHash = await hashRubric(rubric);
  const settings = {
    promptVersion: JUDGE_PROMPT_VERSION,
    orderings: config.orderings,
    seed: config.seed,
    temperature: config.temperature,
  };
  const groupHash = await hashGroup({
    judgeModel: config.model,
    rubricHash,
    settings,
    tools: group.tools,
    trajectories: canonical,
  });
  const provenance = { judgeModel: config.model, rubricHash, groupHash };
  const notes: string[] = [];

  if (cache) {
    try {
      const hit = await cache.get(groupHash);
      if (hit) return fromCache(hit, group.trajectories);
    } catch (error) {
      notes.push(`cache read failed, judging instead: ${String(error)}`);
    }
  }

  // Mixing in the hash gives every group its own orders, still reproducible from (seed, content).
  const seed = (config.seed ^ Number.parseInt(groupHash.slice(0, 8), 16)) >>> 0;
  const judged = identical ? canonical.slice(0, 1) : canonical;
  const plans = planOrderings(judged.length, identical ? 1 : config.orderings, seed);
  const perOrdering: ReadonlyMap<string, LabelScore>[] = [];
  const usages: UsageTally[] = [];
  let calls = 0;
  for (const [k, plan] of plans.entries()) {
    const prompt = buildJudgePrompt({
      blocks: plan.order.map((index, position) => ({
        label: plan.labels[position] as string,
        messages: (judged[index] as JudgeTrajectory).messages,
      })),
      tools: group.tools,
      rubric,
    });
    const result = await judgeWithRetries({
      client,
      prompt,
      policy: judgeRetryPolicy(config),
      sleep: deps.sleep ?? realSleep,
      signal: deps.signal,
    });
    usages.push(result.usage);
    calls += result.attempts;
    if (!result.ok) {
      const usage = sumUsage(usages);
      const where = plans.length > 1 ? ` on ordering ${k + 1} of ${plans.length}` : '';
      return {
        status: 'unscored',
        ...provenance,
        code: result.code,
        reason: `judge failed after ${result.attempts} attempt(s)${where}: ${result.code}: ${result.message}`,
        attempts: calls,
        history: result.history,
        usage,
        ...costOf(usage, config),
      };
    }
    perOrdering.push(result.scores);
    if (result.attempts > 1) notes.push(`ordering ${k + 1}: ${result.attempts - 1} retried attempt(s)`);
  }

  const byId = collect(judged, plans, perOrdering);
  const scores: TrajectoryScore[] = group.trajectories.map((trajectory) => {
    const own = byId.get(identical ? (judged[0] as JudgeTrajectory).id : trajectory.id) as TrajectoryScore;
    return { ...own, trajectoryId: trajectory.id };
  });
  const values = scores.map((s) => s.score);
  const spread = Math.max(...values) - Math.min(...values);
  const noSignal = scores.length < 2 || spread <= config.noSignalTolerance;
  const usage = sumUsage(usages);

  if (identical && scores.length > 1) {
    notes.push(`all ${scores.length} trajectories are identical: judged once, the score copied to each`);
  }
  if (scores.length === 1) notes.push('a single trajectory: its score carries no signal for GRPO');
  else if (noSignal && !identical)
    notes.push(`scores have no spread (all ${values[0]}): the group carries no signal for GRPO`);
  if (plans.length > 1)
    notes.push(`judged in ${plans.length} orders; largest disagreement ${disagreement(scores)}`);
  if (client.mode !== 'json_schema') notes.push(`the judge endpoint answered in ${client.mode} mode`);
  if (usage.unreportedCalls > 0) {
    notes.push(
      `${usage.unreportedCalls} judge call(s) reported no token usage: tokens and cost are a lower bound`,
    );
  }

  const result: ScoredGroup = {
    status: 'scored',
    ...provenance,
    scores,
    noSignal,
    notes,
    calls,
    cached: false,
    usage,
    ...costOf(usage, config),
  };
  if (cache) {
    try {
      await cache.set(groupHash, result);
    } catch (error) {
      notes.push(`cache write failed: ${String(error)}`);
    }
  }
  return result;
}

/** Per trajectory id: the mean score over the orderings and the first ordering's explanation. */
function collect(
  judged: readonly JudgeTrajectory[],
  plans: readonly JudgeOrdering[],
  perOrdering: readonly ReadonlyMap<string, LabelScore>[],
): Map<string, TrajectoryScore> {
  const out = new Map<string, TrajectoryScore>();
  judged.forEach((trajectory, index) => {
    const answers = plans.map((plan, k) => {
      const label = plan.labels[plan.order.indexOf(index)] as string;
      return perOrdering[k]?.get(label) as LabelScore;
    });
    const orderingScores = answers.map((answer) => answer.score);
    out.set(trajectory.id, {
      trajectoryId: trajectory.id,
      score: orderingScores.reduce((sum, score) => sum + score, 0) / orderingScores.length,
      explanation: answers[0]?.explanation ?? '',
      orderingScores,
    });
  });
  return out;
}

/** A cached result, re-keyed to the caller's trajectory order. */
function fromCache(hit: ScoredGroup, trajectories: readonly JudgeTrajectory[]): ScoredGroup {
  const byId = new Map(hit.scores.map((score) => [score.trajectoryId, score]));
  return {
    ...hit,
    scores: trajectories.map((t) => byId.get(t.id) as TrajectoryScore),
    cached: true,
    calls: 0,
    notes: [...hit.notes, 'cache hit: no judge call made'],
  };
}

function disagreement(scores: readonly TrajectoryScore[]): string {
  const widest = Math.max(
    ...scores.map((s) => Math.max(...s.orderingScores) - Math.min(...s.orderingScores)),
  );
  return widest.toFixed(3);
}

function costOf(usage: UsageTally, config: RulerConfig): { costUsd?: number } {
  const cost = estimateCostUsd(usage, config);
  return cost === undefined ? {} : { costUsd: cost };
}
