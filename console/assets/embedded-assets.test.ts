// The embedded browser files are the files they were read from: uPlot's dist as installed, and the
// console's client/ as edited (run `npm run console:embed` after changing either).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { embeddedAssets, uplotVersion } from './embedded-assets.ts';

const root = resolve(import.meta.dirname, '..', '..');

describe('embedded console assets', () => {
  it.each(Object.entries(embeddedAssets))('%s matches %s', (_name, asset) => {
    expect(asset.body === readFileSync(join(root, asset.source), 'utf8')).toBe(true);
  });

  it('embeds the uPlot version package.json pins', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies.uplot).toBe(uplotVersion);
  });
});
