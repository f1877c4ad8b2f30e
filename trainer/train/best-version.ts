// Which version ships, and which checkpoints are kept, chosen on evidence: each version's mean
// verifier reward on the validation split (db/store/version-split-rewards.ts). Pure: scores in,
// choices out. Retention follows OpenPipe ART's `delete_checkpoints(best_checkpoint_metric=...)`,
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

/** The best of `candidates` by validation (rankByValidation), or undefined when none has the evidence. */
export function bestVersion(
  candidates: readonly ValidationScore[],
  minEpisodes: number,
): (ValidationScore & { readonly meanReward: number }) | undefined {
  return rankByValidation(candidates, minEpisodes)[0];
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
