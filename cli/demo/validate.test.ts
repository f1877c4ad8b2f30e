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
  it('ships the best RL version, not the start, not necessarily the last', () => {
    // The start scored highest, yet the A/B compares it with the best RL version (v3).
    const scores = [score(1, 0.95), score(2, 0.6), score(3, 0.8), score(4, 0.8, 20), score(5, 0.5)];
    const choice = chooseShipped(config, versions, scores);
    expect(choice).toMatchObject({ rule: 'best-validation', version: version(3), last: version(5) });
    expect(describeChoice(choice, scores)).toBe(
      'shipping demo@3 (validation 80.0%, the best RL version by validation; the last, demo@5: validation 50.0%)',
    );
  });

  it('breaks a tie towards the newer version', () => {
    const choice = chooseShipped(config, versions, [score(2, 0.75), score(4, 0.75), score(5, 0.5)]);
    expect(choice.version).toEqual(version(4));
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
