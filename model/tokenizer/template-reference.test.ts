// The JS renderer against Python Jinja2 set up like transformers (test/fixtures/tokenizer/render-reference.json,
// made by make-render-reference.ts): the tiny template, Qwen3's and Qwen2.5's render byte for byte the same.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { createTokenizer } from './chat-tokenizer.ts';
import { qwen25ChatTemplate } from './qwen25-chat-template.ts';
import { qwenModelDir } from './test-fixtures.ts';
import { tinyChatTemplate } from './tiny-chat-template.ts';
import { tinyTokenizerFiles } from './tiny-tokenizer.ts';

interface ReferenceCase {
  name: string;
  template: 'tiny' | 'qwen3' | 'qwen2.5';
  messages: ChatMessage[];
  tools?: ToolSpec[];
  addGenerationPrompt?: boolean;
  extra?: Record<string, unknown>;
  expected: string;
}

const reference = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../test/fixtures/tokenizer/render-reference.json'), 'utf8'),
) as { templates: Record<ReferenceCase['template'], string>; cases: ReferenceCase[] };
const qwenTemplate = (
  JSON.parse(readFileSync(join(qwenModelDir(), 'tokenizer_config.json'), 'utf8')) as { chat_template: string }
).chat_template;
const files = tinyTokenizerFiles();
// Rendering needs no vocabulary, so the tiny tokenizer carries either template.
const renderers = {
  tiny: createTokenizer(files.tokenizerJson, files.tokenizerConfig),
  qwen3: createTokenizer(files.tokenizerJson, files.tokenizerConfig, { chatTemplate: qwenTemplate }),
  'qwen2.5': createTokenizer(files.tokenizerJson, files.tokenizerConfig, {
    chatTemplate: qwen25ChatTemplate,
  }),
};

describe('chat templates against Python Jinja2', () => {
  it('were generated from the current templates', () => {
    const regenerate = 'templates changed: run npx tsx test/fixtures/tokenizer/make-render-reference.ts';
    expect(reference.templates.tiny, regenerate).toBe(tinyChatTemplate);
    expect(reference.templates.qwen3, regenerate).toBe(qwenTemplate);
    expect(reference.templates['qwen2.5'], regenerate).toBe(qwen25ChatTemplate);
  });

  it.each(reference.cases.map((entry) => [`${entry.template}: ${entry.name}`, entry] as const))(
    '%s',
    (_, entry) => {
      const { messages, tools, addGenerationPrompt, extra } = entry;
      expect(
        renderers[entry.template].applyChatTemplate(messages, { tools, addGenerationPrompt, extra }),
      ).toBe(entry.expected);
    },
  );
});
