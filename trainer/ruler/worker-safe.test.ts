// RULER runs in the trainer (Node) and may run at the edge (Workers): its modules must use web APIs
// only (fetch, AbortSignal, crypto.subtle), never Node built-ins or process.env.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dir = new URL('.', import.meta.url);
const sources = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

describe('trainer/ruler modules', () => {
  it('import no Node built-ins and read no process state', () => {
    expect(sources.length).toBeGreaterThan(10);
    const offenders = sources.filter((name) => {
      const text = readFileSync(new URL(name, dir), 'utf8');
      return /from\s+['"](node:|fs|path|http|crypto)['"/]|\bprocess\.|\brequire\(/.test(text);
    });
    expect(offenders).toEqual([]);
  });
});
