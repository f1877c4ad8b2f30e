import { describe, expect, it } from 'vitest';
import { experimentName } from '../../db/store/create-experiment.ts';
import { abTestName } from './ab-test-name.ts';

describe('abTestName', () => {
  it('spells the served name with the characters an experiment name allows', () => {
    expect(abTestName('agent@3')).toBe('agent-3-vs-parent');
    expect(abTestName('my agent@12')).toBe('my-agent-12-vs-parent');
  });

  it('gives a name the store accepts for any served name, at most 100 characters', () => {
    for (const adapterName of ['agent@3', '@@odd name', `${'x'.repeat(300)}@1`, '---', 'ü@1']) {
      const name = abTestName(adapterName);
      expect(experimentName.safeParse(name).success, name).toBe(true);
      expect(name.length).toBeLessThanOrEqual(100);
    }
  });
});
