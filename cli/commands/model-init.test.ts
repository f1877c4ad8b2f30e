import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHfConfig } from '../../model/hf-config.ts';
import { parameterCount } from '../../model/init-model.ts';
import { main } from '../main.ts';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += chunk));
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env: {} });
  return { code, out, err };
}

describe('edgerl model init', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'edgerl-cli-init-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes a model directory and refuses to overwrite it without --force', async () => {
    const target = join(dir, 'm');
    const first = await run(['model', 'init', '--out', target, '--arch', 'llama', '--seed', '3']);
    expect(first.code).toBe(0);
    // The vocabulary size comes from the tokenizer, so the count is derived from the written config.
    const config = parseHfConfig(JSON.parse(await readFile(join(target, 'config.json'), 'utf8')));
    expect(first.out).toContain(
      `wrote tiny llama model (${parameterCount(config).toLocaleString('en-US')} parameters, seed 3)`,
    );
    for (const file of [
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]) {
      expect(existsSync(join(target, file)), file).toBe(true);
    }
    expect(JSON.parse(await readFile(join(target, 'config.json'), 'utf8')).model_type).toBe('llama');
    const again = await run(['model', 'init', '--out', target]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/already holds a model \(config\.json\); pass --force/);
    expect((await run(['model', 'init', '--out', target, '--force'])).code).toBe(0);
  });

  it('names bad flags', async () => {
    expect((await run(['model', 'init'])).err).toMatch(/--out DIR is required/);
    expect((await run(['model', 'init', '--out', dir, '--preset', 'huge'])).err).toMatch(
      /--preset must be one of tiny, small, got "huge"/,
    );
    expect((await run(['model', 'init', '--out', dir, '--arch', 'gpt2'])).err).toMatch(
      /--arch must be one of llama, qwen2/,
    );
    expect((await run(['model', 'init', '--out', dir, '--dtype', 'int8'])).err).toMatch(
      /--dtype must be one of float32, bfloat16, float16/,
    );
  });
});
