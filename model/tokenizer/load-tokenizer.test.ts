import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTokenizer } from './chat-tokenizer.ts';
import { loadTokenizer } from './load-tokenizer.ts';
import { tinyTokenizerFiles } from './tiny-tokenizer.ts';

const files = tinyTokenizerFiles();
const dirs: string[] = [];

async function modelDir(extra: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'edgerl-tokenizer-'));
  dirs.push(dir);
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizerJson));
  await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify(files.tokenizerConfig));
  for (const [name, text] of Object.entries(extra)) await writeFile(join(dir, name), text);
  return dir;
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('loadTokenizer', () => {
  it('loads a directory written from tinyTokenizerFiles', async () => {
    const tokenizer = await loadTokenizer(await modelDir());
    expect(tokenizer.encode('Hi<|im_end|>')).toEqual([72, 105, files.specialTokens.imEnd]);
    expect(tokenizer.eosTokenIds).toEqual([files.specialTokens.imEnd]);
    expect(tokenizer.vocabSize).toBe(files.tokenCount);
  });

  it('takes eos ids from generation_config.json, keeping the config’s eos', async () => {
    const { imEnd, endOfText } = files.specialTokens;
    const dir = await modelDir({ 'generation_config.json': JSON.stringify({ eos_token_id: [endOfText] }) });
    expect((await loadTokenizer(dir)).eosTokenIds).toEqual([endOfText, imEnd]);
    const single = await modelDir({ 'generation_config.json': JSON.stringify({ eos_token_id: imEnd }) });
    expect((await loadTokenizer(single)).eosTokenIds).toEqual([imEnd]);
  });

  it('prefers chat_template.jinja over the config’s template', async () => {
    const dir = await modelDir({
      'chat_template.jinja': '{% for m in messages %}[{{ m.content }}]{% endfor %}',
    });
    const tokenizer = await loadTokenizer(dir);
    expect(tokenizer.applyChatTemplate([{ role: 'user', content: 'x' }])).toBe('[x]');
  });

  it('names the missing or broken file', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'edgerl-tokenizer-'));
    dirs.push(empty);
    await expect(loadTokenizer(empty)).rejects.toThrow(/tokenizer\.json not found/);
    const broken = await modelDir({ 'generation_config.json': '{ nope' });
    await expect(loadTokenizer(broken)).rejects.toThrow(/generation_config\.json is not valid JSON/);
  });
});

describe('createTokenizer', () => {
  it('rejects input that is not a tokenizer, saying which', () => {
    expect(() => createTokenizer([], files.tokenizerConfig)).toThrow(
      /tokenizer\.json must hold a JSON object/,
    );
    expect(() => createTokenizer({ model: {} }, {})).toThrow(/tokenizer\.json could not be loaded/);
    const noEos = { ...files.tokenizerConfig, eos_token: null };
    expect(() => createTokenizer(files.tokenizerJson, noEos)).toThrow(/no end-of-sequence token/);
    const unknownPad = { ...files.tokenizerConfig, pad_token: '<pad>' };
    expect(() => createTokenizer(files.tokenizerJson, unknownPad)).toThrow(/pad_token "<pad>"/);
  });

  it('says so when there is no chat template, and chooses tool_use from a template list', () => {
    const { chat_template: _, ...bare } = files.tokenizerConfig;
    const plain = createTokenizer(files.tokenizerJson, bare);
    expect(() => plain.applyChatTemplate([{ role: 'user', content: 'x' }])).toThrow(/no chat_template/);
    const listed = createTokenizer(files.tokenizerJson, {
      ...bare,
      chat_template: [
        { name: 'default', template: 'plain' },
        { name: 'tool_use', template: 'tools:{{ tools | length }}' },
      ],
    });
    const tool = { type: 'function' as const, function: { name: 'f' } };
    expect(listed.applyChatTemplate([], {})).toBe('plain');
    expect(listed.applyChatTemplate([], { tools: [tool] })).toBe('tools:1');
  });

  it('reports template errors as render failures', () => {
    const raising = createTokenizer(files.tokenizerJson, {
      ...files.tokenizerConfig,
      chat_template: "{{ raise_exception('only user turns') }}",
    });
    expect(() => raising.applyChatTemplate([])).toThrow(/chat template failed to render: only user turns/);
  });
});
