// `edgerl ab create`'s flag parsing: arm specs and the sample size, without a store.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/command.ts';
import { parseArmSpec, resolveMinSamples } from '../../cli/commands/ab-create.ts';
import { defaultMinSamples } from '../../db/store-constants.ts';

describe('parseArmSpec', () => {
  it('splits at the last "=" and defaults the weight to 1', () => {
    expect(parseArmSpec('agent@3=0.25')).toEqual({ version: 'agent@3', weight: 0.25 });
    expect(parseArmSpec('agent@latest')).toEqual({ version: 'agent@latest', weight: 1 });
    expect(parseArmSpec('odd=name=2')).toEqual({ version: 'odd=name', weight: 2 });
  });

  it('names the bad spec', () => {
    for (const [spec, message] of [
      ['agent@3=0', /--arm "agent@3=0": the weight must be a positive number, got "0"/],
      ['agent@3=abc', /got "abc"/],
      ['agent@3=', /got ""/],
      ['=2', /--arm "=2": name a version before "="/],
    ] as const) {
      expect(() => parseArmSpec(spec)).toThrow(UsageError);
      expect(() => parseArmSpec(spec)).toThrow(message);
    }
  });
});

describe('resolveMinSamples', () => {
  it('takes --min-samples, else sizes a success test from --baseline/--min-effect, else the default', () => {
    expect(resolveMinSamples({ 'min-samples': '250' }, 'reward')).toEqual({
      minSamples: 250,
      why: '--min-samples',
    });
    expect(resolveMinSamples({}, 'reward')).toEqual({ minSamples: defaultMinSamples, why: 'the default' });
    // n = (z₀.₉₇₅ + z₀.₈)² (p₁q₁ + p₂q₂) / (p₂ − p₁)² with p₁ = 0.5, p₂ = 0.8:
    //   (1.959964 + 0.841621)² · (0.25 + 0.16) / 0.09 = 7.848879 · 0.41 / 0.09 = 35.756 → 36
    expect(resolveMinSamples({ baseline: '0.5', 'min-effect': '0.3' }, 'success')).toEqual({
      minSamples: 36,
      why: 'sized to detect 0.5 → 0.8 at α = 0.05 with power 0.8',
    });
    // p₁ = 0.3, p₂ = 0.2 (a drop): 7.848879 · (0.21 + 0.16) / 0.01 = 290.41 → 291
    expect(resolveMinSamples({ baseline: '0.3', 'min-effect': '-0.1' }, 'success').minSamples).toBe(291);
  });

  it('refuses contradictory or out-of-range flags', () => {
    expect(() => resolveMinSamples({ 'min-samples': '1' }, 'reward')).toThrow(/between 2 and/);
    expect(() =>
      resolveMinSamples({ 'min-samples': '10', baseline: '0.5', 'min-effect': '0.1' }, 'success'),
    ).toThrow(/either --min-samples or --baseline/);
    expect(() => resolveMinSamples({ baseline: '0.5' }, 'success')).toThrow(/go together/);
    expect(() => resolveMinSamples({ baseline: '0.5', 'min-effect': '0.1' }, 'reward')).toThrow(
      /add --metric success/,
    );
    expect(() => resolveMinSamples({ baseline: '1.5', 'min-effect': '0.1' }, 'success')).toThrow(
      /--baseline must be/,
    );
    expect(() => resolveMinSamples({ baseline: '0.9', 'min-effect': '0.2' }, 'success')).toThrow(
      /strictly between 0 and 1/,
    );
  });
});
