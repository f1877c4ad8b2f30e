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

  it('lists every preset in its usage, the Qwen ones with the model they copy', async () => {
    const { code, out } = await run(['model', 'init', '--help']);
    expect(code).toBe(0);
    for (const line of [
      /tiny\s+hidden 64, 2 layers/,
      /small\s+hidden 256, 4 layers/,
      /qwen2\.5-0\.5b\s+Qwen\/Qwen2\.5-0\.5B-Instruct \(0\.49B\)/,
      /qwen2\.5-1\.5b\s+Qwen\/Qwen2\.5-1\.5B-Instruct \(1\.54B\)/,
      /qwen2\.5-7b\s+Qwen\/Qwen2\.5-7B-Instruct \(7\.61B\)/,
      /qwen3-0\.6b\s+Qwen\/Qwen3-0\.6B \(0\.6B\)/,
      /--arch NAME\s+llama \| qwen2 \| qwen3, for tiny and small/,
    ]) {
      expect(out).toMatch(line);
    }
  });

  it('names bad flags', async () => {
    expect((await run(['model', 'init'])).err).toMatch(/--out DIR is required/);
    expect((await run(['model', 'init', '--out', dir, '--preset', 'huge'])).err).toMatch(
      /--preset must be one of tiny, small, qwen2.5-0.5b, qwen2.5-1.5b, qwen2.5-7b, qwen3-0.6b, got "huge"/,
    );
    expect((await run(['model', 'init', '--out', dir, '--arch', 'gpt2'])).err).toMatch(
      /--arch must be one of llama, qwen2, qwen3/,
    );
    // A real preset's architecture is the model's own: nothing is written when another one is asked for.
    const conflict = await run([
      'model',
      'init',
      '--out',
      join(dir, 'x'),
      '--preset',
      'qwen3-0.6b',
      '--arch',
      'qwen2',
    ]);
    expect(conflict.code).toBe(2);
    expect(conflict.err).toMatch(
      /--preset qwen3-0.6b is Qwen\/Qwen3-0.6B, a qwen3 model: drop --arch qwen2 \(--arch chooses the architecture of tiny and small\)/,
    );
    expect(existsSync(join(dir, 'x'))).toBe(false);
    expect((await run(['model', 'init', '--out', dir, '--dtype', 'int8'])).err).toMatch(
      /--dtype must be one of float32, bfloat16, float16/,
    );
  });
});
