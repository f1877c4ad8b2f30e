// The tokenizer files the Qwen presets write, through the same constructor loadTokenizer uses: Qwen3's
// as shipped, Qwen2.5's derived from them (22 added tokens, its own chat template). The directories
// were also loaded with transformers' AutoTokenizer by hand (docs/model-runtime.md).
import { describe, expect, it } from 'vitest';
import { createTokenizer } from './chat-tokenizer.ts';
import { type QwenTokenizerFamily, qwenTokenizerFiles } from './qwen-tokenizer-files.ts';

function tokenizer(family: QwenTokenizerFamily) {
  const files = qwenTokenizerFiles(family);
  const parse = (value: string | object) => (typeof value === 'string' ? JSON.parse(value) : value);
  return createTokenizer(parse(files.tokenizerJson), parse(files.tokenizerConfig));
}

describe('Qwen tokenizer files', () => {
  const qwen3 = tokenizer('qwen3');
  const qwen25 = tokenizer('qwen2.5');

  it('give the known ids for known strings, in both families', () => {
    for (const qwen of [qwen3, qwen25]) {
      expect(qwen.encode('Hello world')).toEqual([9707, 1879]);
      expect(qwen.encode('<|im_start|>user\n<tool_call>')).toEqual([151644, 872, 198, 151657]);
      expect(qwen.eosTokenIds).toEqual([151645]);
      expect(qwen.padTokenId).toBe(151643);
    }
  });

  it('Qwen2.5 stops at <|file_sep|> (151664); Qwen3 adds the tool-response and think tags', () => {
    expect(qwen25.vocabSize).toBe(151665);
    expect(qwen3.vocabSize).toBe(151669);
    expect(qwen25.tokenToId('<|file_sep|>')).toBe(151664);
    expect(qwen25.tokenToId('<think>')).toBeUndefined();
    expect(qwen3.tokenToId('<think>')).toBe(151667);
    expect(qwen25.encode('<think>').length).toBeGreaterThan(1);
  });

  it("render each family's own chat template: Qwen2.5's default system prompt, Qwen3's think block", () => {
    const messages = [{ role: 'user' as const, content: 'Hi' }];
    expect(qwen25.applyChatTemplate(messages, { addGenerationPrompt: true })).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(
      qwen3.applyChatTemplate(messages, { addGenerationPrompt: true, extra: { enable_thinking: false } }),
    ).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
  });
});
