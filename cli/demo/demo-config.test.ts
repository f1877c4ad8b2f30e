// The demo's config schema: the defaults it applies, `--quick`'s sizes under explicit values, the
// usage listing every flag with its default, and bad values refused naming the flag and the range.
import { describe, expect, it } from 'vitest';
import { configFields } from '../../protocol/config-docs.ts';
import { demoCommand } from '../commands/demo.ts';
import { formatDefault } from '../flags/config-usage.ts';
import { DemoConfigError, demoConfigSchema, quickOverrides, resolveDemoConfig } from './demo-config.ts';

const fields = configFields(demoConfigSchema);

describe('resolveDemoConfig', () => {
  it('applies the written defaults, and --quick sizes under explicit values', () => {
    const full = resolveDemoConfig({});
    expect(full).toMatchObject({
      rounds: 16,
      groupSize: 8,
      evalPerArm: 100,
      dataDir: '.edgerl/demo',
      quick: false,
    });
    const quick = resolveDemoConfig({ quick: true, rounds: 3 });
    expect(quick).toMatchObject({ ...quickOverrides, rounds: 3, quick: true, temperature: full.temperature });
  });

  it('lists every bad value with its flag and what it must be', () => {
    let error: unknown;
    try {
      resolveDemoConfig({ groupSize: 1, temperature: 0, preset: 'huge' as 'tiny', dataDir: ' ' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DemoConfigError);
    expect((error as DemoConfigError).issues).toEqual([
      '--data-dir must name a directory',
      '--preset must be one of tiny, small, got "huge"',
      '--group-size must be an integer between 2 and 256, got 1',
      '--temperature must be in (0, 2] (the demo samples), got 0',
    ]);
  });
});

describe('edgerl demo usage', () => {
  it('lists every flag with its default', () => {
    const usage = demoCommand.usage.replace(/\n {3,}/g, ' ');
    const lines = usage.split('\n');
    for (const { doc, defaultValue } of fields) {
      if (!doc.flag) {
        expect(usage).toMatch(new RegExp(`^ {2}${doc.env} `, 'm'));
        continue;
      }
      const line = lines.find((text) => text.startsWith(`  --${doc.flag} `));
      expect(line, doc.flag).toBeDefined();
      // A flag with an environment variable names it first: `(or EDGERL_X; default …)`.
      const opening = doc.env ? `(or ${doc.env}; default` : '(default';
      if (doc.arg !== undefined)
        expect(line).toContain(`${opening} ${doc.shownDefault ?? formatDefault(defaultValue)}`);
    }
    expect(usage).toMatch(/--rounds N .*\(default 16; --quick 1\)/);
    expect(Object.keys(demoCommand.options ?? {}).sort()).toEqual(
      fields.flatMap((field) => (field.doc.flag ? [field.doc.flag] : [])).sort(),
    );
  });
});
