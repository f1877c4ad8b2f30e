// Which version the demo ships: the best RL version by validation (never the warm start, the A/B's
// other arm), ties to the newer, a partly validated version left out; the last one otherwise.
import { describe, expect, it } from 'vitest';
import type { VersionSplitReward } from '../../db/store.ts';
import { resolveDemoConfig } from './demo-config.ts';
import type { PublishedVersion } from './demo-queries.ts';
import { chooseShipped, describeChoice, validationTaskSeed } from './validate.ts';

const version = (n: number): PublishedVersion => ({ id: `id${n}`, version: n, adapterName: `demo@${n}` });
const versions = [1, 2, 3, 4, 5].map(version);
const score = (n: number, meanReward: number | null, episodes = 32): VersionSplitReward => ({
  policyVersionId: `id${n}`,
  version: n,
  adapterName: `demo@${n}`,
  episodes,
  rewarded: episodes,
  errors: 0,
  meanReward,
});
const config = resolveDemoConfig({});

describe('chooseShipped', () => {
  it('ships an earlier RL version (never the start) that beats the last by the margin', () => {
    // The start scored highest, yet the A/B compares it with an RL version. v3 at 30/32 beats the last
    // (v5, 20/32) by 0.31, SE √(0.9375·0.0625 + 0.625·0.375)/√32 = 0.096: 3.3 SE. v4 is only half validated.
    const scores = [score(1, 1), score(2, 0.6), score(3, 30 / 32), score(4, 1, 20), score(5, 20 / 32)];
    const choice = chooseShipped(config, versions, scores);
    expect(choice).toMatchObject({ rule: 'best-validation', version: version(3), last: version(5) });
    expect(describeChoice(choice, scores)).toBe(
      'shipping demo@3 (validation 93.8%; the last, demo@5: validation 62.5%)',
    );
  });

  it('keeps the last when no earlier version beats it by more than noise', () => {
    const scores = [score(2, 20 / 32), score(3, 18 / 32), score(4, 0.5), score(5, 19 / 32)];
    const choice = chooseShipped(config, versions, scores);
    expect(choice).toMatchObject({
      rule: 'last',
      version: version(5),
      why: 'no earlier version beat it by the margin',
    });
    expect(describeChoice(choice, scores)).toBe(
      'shipping demo@5, the last version (validation 59.4%; no earlier version beat it by the margin)',
    );
  });

  it('falls back to the last version, saying why', () => {
    expect(chooseShipped(config, versions, [score(2, 0.9, 31)])).toMatchObject({
      rule: 'last',
      version: version(5),
      why: 'no RL version fully validated',
    });
    expect(chooseShipped(resolveDemoConfig({ validationTasks: 0 }), versions, [score(2, 0.9)])).toMatchObject(
      {
        rule: 'last',
        why: 'validation is off',
      },
    );
    expect(chooseShipped(config, [version(1)], [score(1, 0.4)])).toMatchObject({
      version: version(1),
      why: 'RL published no version',
    });
    expect(() => chooseShipped(config, [], [])).toThrow(/no published demo version/);
  });
});

describe('validationTaskSeed', () => {
  it('gives every version the same seeds, apart per demo seed', () => {
    expect(validationTaskSeed(4, 0)).toBe(validationTaskSeed(4, 0));
    expect(validationTaskSeed(4, 31)).toBe(4_000_000 + 4 * 100_003 + 31);
    expect(validationTaskSeed(5, 0)).not.toBe(validationTaskSeed(4, 0));
  });
});
