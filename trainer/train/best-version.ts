// Which version ships, and which checkpoints are kept, chosen on evidence: each version's mean
// verifier reward on the validation split (db/store/version-split-rewards.ts): the newest ships unless an
// earlier one is better by a margin (shippedVersion). Pure: scores in, choices out. Retention follows OpenPipe ART's `delete_checkpoints(best_checkpoint_metric=...)`,
// which keeps the latest checkpoint and the best one by a validation metric.

/** A version's validation evidence (a row of `versionSplitRewards`). */
export interface ValidationScore {
  readonly policyVersionId: string;
  readonly version: number;
  /** Ended validation episodes. */
  readonly episodes: number;
  /** Mean verifier reward over them (null: none has a reward). */
  readonly meanReward: number | null;
}

/**
 * Scored versions, best first: the highest mean validation reward among those with at least
 * `minEpisodes` ended episodes (a version whose validation was cut short is not compared with fully
 * validated ones). Equal means go to the newer version: the same evidence, and more training behind it
 * (the latest is what the lineage continues from).
 */
export function rankByValidation(
  scores: readonly ValidationScore[],
  minEpisodes: number,
): (ValidationScore & { readonly meanReward: number })[] {
  const eligible = scores.filter(
    (score): score is ValidationScore & { meanReward: number } =>
      score.meanReward !== null && Number.isFinite(score.meanReward) && score.episodes >= minEpisodes,
  );
  return eligible.sort((a, b) => b.meanReward - a.meanReward || b.version - a.version);
}

/**
 * The versions whose checkpoints retention keeps: the newest `keepLatest` of `committed` (oldest
 * first, as the checkpoints are listed) and the `keepBest` best of them by validation.
 */
export function versionsToKeep(
  committed: readonly string[],
  scores: readonly ValidationScore[],
  options: { readonly keepLatest: number; readonly keepBest: number; readonly minEpisodes: number },
): Set<string> {
  const keep = new Set(committed.slice(Math.max(0, committed.length - options.keepLatest)));
  const present = new Set(committed);
  const ranked = rankByValidation(
    scores.filter((score) => present.has(score.policyVersionId)),
    options.minEpisodes,
  );
  for (const score of ranked.slice(0, options.keepBest)) keep.add(score.policyVersionId);
  return keep;
}

/**
 * How far an earlier version's validation mean must be above the last version's to ship it instead:
 * `z` standard errors of the difference of two means over n₁ and n₂ episodes, each reward's variance
 * taken as m(1 − m) (exact for 0/1 rewards, an upper bound for rewards in [0, 1]). The maximum of many
 * noisy scores is biased upwards (the winner's curse), and RL's versions are on average getting better,
 * so the last ships unless the evidence says otherwise. z = 1.645 is the one-sided 5% level of the
 * two-proportion z-test.
 */
export const defaultShipMarginZ = 1.645;

/**
 * The version to ship from `candidates`: the best by validation (rankByValidation) when it beats the
 * newest by more than `z` standard errors of the difference, else the newest; the best when the newest
 * has no full validation (a run cut short). `beatLast` says whether an earlier version won. Undefined
 * when no candidate has the evidence.
 */
export function shippedVersion(
  candidates: readonly ValidationScore[],
  /** `newest`: the newest version's number (it may have no score yet). */
  options: { readonly minEpisodes: number; readonly newest: number; readonly z?: number },
):
  | { readonly score: ValidationScore & { readonly meanReward: number }; readonly beatLast: boolean }
  | undefined {
  const ranked = rankByValidation(candidates, options.minEpisodes);
  const best = ranked[0];
  if (!best) return undefined;
  const last = ranked.find((score) => score.version === options.newest);
  if (!last) return { score: best, beatLast: false };
  if (last === best) return { score: last, beatLast: false };
  const z = options.z ?? defaultShipMarginZ;
  const se = Math.sqrt(
    (best.meanReward * (1 - best.meanReward)) / best.episodes +
      (last.meanReward * (1 - last.meanReward)) / last.episodes,
  );
  return best.meanReward - last.meanReward > z * se
    ? { score: best, beatLast: true }
    : { score: last, beatLast: false };
}
