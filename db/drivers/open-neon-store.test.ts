// The Worker entry must not pull in Node-only code: walks the relative imports from open-neon-store.ts
// and checks every package it reaches against the ones a Worker bundle can hold.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// `import type` is erased before bundling, so it is skipped.
const importPattern =
  /(?:^|\n)\s*(?:import|export)\s(?!type\s)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

function packagesReachedFrom(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const pending = [entry];
  const seen = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    files.push(file);
    for (const match of readFileSync(file, 'utf8').matchAll(importPattern)) {
      const spec = match[1] ?? match[2] ?? match[3] ?? '';
      if (spec.startsWith('.')) pending.push(resolve(dirname(file), spec));
      else packages.add(spec);
    }
  }
  return { files, packages };
}

describe('open-neon-store.ts (the Worker entry)', () => {
  it('reaches only Worker-safe packages', () => {
    const { files, packages } = packagesReachedFrom(resolve(import.meta.dirname, 'open-neon-store.ts'));
    expect(files.some((file) => file.endsWith('store.ts'))).toBe(true);
    const allowed =
      /^(drizzle-orm(\/(pg-core|neon-serverless))?|zod|@neondatabase\/serverless|@noble\/hashes\/[a-z0-9]+\.js)$/;
    expect([...packages].filter((name) => !allowed.test(name))).toEqual([]);
  });
});
