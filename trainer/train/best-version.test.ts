// The choice rule: best validation mean among fully validated versions, ties to the newer; retention
// keeps the newest N plus the best k. Expected values are worked out by hand from the scores below.
import { describe, expect, it } from 'vitest';
import { rankByValidation, shippedVersion, type ValidationScore, versionsToKeep } from './best-version.ts';

const score = (version: number, meanReward: number | null, episodes = 32): ValidationScore => ({
  policyVersionId: `v${version}`,
  version,
  episodes,
  meanReward,
});

describe('rankByValidation', () => {
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
    // With a lower bar the half-validated v5 competes, and leads.
    expect(rankByValidation(scores, 10)[0]?.version).toBe(5);
    expect(rankByValidation([], 1)).toEqual([]);
  });

  it('does not reorder its input', () => {
    const scores = [score(2, 0.1), score(3, 0.9)];
    rankByValidation(scores, 1);
    expect(scores.map((s) => s.version)).toEqual([2, 3]);
  });
});

describe('shippedVersion', () => {
  it('ships an earlier version only when it beats the last by the margin', () => {
    // 30/32 against 23/32: difference 0.219, SE √(0.9375·0.0625/32 + 0.71875·0.28125/32) = 0.0904,
    // 2.4 SE > 1.645: the earlier one ships.
    const fellBack = [score(2, 0.5), score(3, 30 / 32), score(4, 23 / 32)];
    expect(shippedVersion(fellBack, { minEpisodes: 32, newest: 4 })).toMatchObject({
      score: { version: 3 },
      beatLast: true,
    });
    // 20/32 against 19/32: 0.031 apart, SE 0.122: noise, the last ships.
    const noise = [score(2, 20 / 32), score(3, 18 / 32), score(4, 19 / 32)];
    expect(shippedVersion(noise, { minEpisodes: 32, newest: 4 })).toMatchObject({
      score: { version: 4 },
      beatLast: false,
    });
    // With no margin the best ships whenever it is ahead.
    expect(shippedVersion(noise, { minEpisodes: 32, newest: 4, z: 0 })?.score.version).toBe(2);
  });

  it('ships the last when it is the best, and the best when the last was not fully validated', () => {
    expect(shippedVersion([score(2, 0.5), score(3, 0.8)], { minEpisodes: 32, newest: 3 })).toMatchObject({
      score: { version: 3 },
      beatLast: false,
    });
    expect(
      shippedVersion([score(2, 0.5), score(3, 0.8, 10)], { minEpisodes: 32, newest: 3 })?.score.version,
    ).toBe(2);
    expect(shippedVersion([score(2, 0.5)], { minEpisodes: 32, newest: 3 })?.score.version).toBe(2);
    expect(shippedVersion([score(2, null)], { minEpisodes: 1, newest: 2 })).toBeUndefined();
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
