// The choice rule: best validation mean among fully validated versions, ties to the newer; retention
// keeps the newest N plus the best k. Expected values are worked out by hand from the scores below.
import { describe, expect, it } from 'vitest';
import { bestVersion, rankByValidation, type ValidationScore, versionsToKeep } from './best-version.ts';

const score = (version: number, meanReward: number | null, episodes = 32): ValidationScore => ({
  policyVersionId: `v${version}`,
  version,
  episodes,
  meanReward,
});

describe('rankByValidation / bestVersion', () => {
  it('ranks by mean, newest first among equals, leaving out versions short of evidence', () => {
    const scores = [
      score(2, 0.5),
      score(3, 0.75),
      score(4, 0.75),
      score(5, 0.9, 10),
      score(6, null),
      score(7, 0.25),
    ];
    expect(rankByValidation(scores, 32).map((s) => s.version)).toEqual([4, 3, 2, 7]);
    expect(bestVersion(scores, 32)?.version).toBe(4);
    // With a lower bar the half-validated v5 competes, and wins.
    expect(bestVersion(scores, 10)?.version).toBe(5);
  });

  it('is undefined when nothing was validated', () => {
    expect(bestVersion([], 1)).toBeUndefined();
    expect(bestVersion([score(2, null), score(3, 0.5, 3)], 4)).toBeUndefined();
  });

  it('does not reorder its input', () => {
    const scores = [score(2, 0.1), score(3, 0.9)];
    rankByValidation(scores, 1);
    expect(scores.map((s) => s.version)).toEqual([2, 3]);
  });
});

describe('versionsToKeep', () => {
  const committed = ['v2', 'v3', 'v4', 'v5', 'v6'];
  const scores = [score(2, 0.4), score(3, 0.9), score(4, 0.6), score(5, 0.8), score(6, 0.2), score(9, 1)];

  it('keeps the newest N and the best k of the committed ones', () => {
    expect(
      [...versionsToKeep(committed, scores, { keepLatest: 1, keepBest: 1, minEpisodes: 1 })].sort(),
    ).toEqual(['v3', 'v6']);
    expect(
      [...versionsToKeep(committed, scores, { keepLatest: 2, keepBest: 2, minEpisodes: 1 })].sort(),
    ).toEqual(['v3', 'v5', 'v6']);
  });

  it('ignores scores of versions without a checkpoint here, and keeps only the latest without scores', () => {
    // v9 scored best but has no checkpoint in this directory.
    expect(
      [...versionsToKeep(['v2', 'v6'], scores, { keepLatest: 1, keepBest: 1, minEpisodes: 1 })].sort(),
    ).toEqual(['v2', 'v6']);
    expect([...versionsToKeep(committed, [], { keepLatest: 2, keepBest: 1, minEpisodes: 1 })].sort()).toEqual(
      ['v5', 'v6'],
    );
  });
});
