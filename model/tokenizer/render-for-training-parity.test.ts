import { describe, expect, it } from 'vitest';
import { renderByPrompts } from '../../test/support/render-by-prompts.ts';
import { type ChatTokenizer, createTokenizer } from './chat-tokenizer.ts';
import {
  renderForTraining,
  TemplatePrefixError,
  type TrainingMessage,
  type TrainingRenderInput,
} from './render-for-training.ts';
import { loadQwenTokenizer, weatherEpisode } from './test-fixtures.ts';
import { tinyTokenizerFiles } from './tiny-tokenizer.ts';

// The linear render against the algorithm it replaced (test/support/render-by-prompts.ts, the code
// of commit c63f845), on long multi-turn episodes mixing every kind of assistant turn.
const files = tinyTokenizerFiles();
const tiny = createTokenizer(files.tokenizerJson, files.tokenizerConfig);
const qwen = loadQwenTokenizer();
const episode = weatherEpisode();
const cycle = episode.messages.slice(2); // assistant, tool, tool, assistant, tool, assistant

type TurnKind = 'sampled' | 'length-cut' | 'unsampled' | 'drift';
const kinds: TurnKind[] = ['sampled', 'drift', 'length-cut', 'unsampled'];

/** The weather episode's six-message cycle `cycles` times, a new user question between cycles; assistant turn k is of kind k mod 4. */
function longEpisode(tokenizer: ChatTokenizer, cycles: number, eos: number): TrainingMessage[] {
  const messages: TrainingMessage[] = episode.messages.slice(0, 2);
  let turn = 0;
  for (let round = 0; round < cycles; round++) {
    if (round > 0) messages.push({ role: 'user', content: `And again, round ${round + 1}?` });
    let output = 0;
    for (const message of cycle) {
      if (message.role !== 'assistant') {
        messages.push(message);
        continue;
      }
      const text = episode.outputs[output++] ?? '';
      const kind = kinds[turn++ % kinds.length] as TurnKind;
      const ids = tokenizer.encode(kind === 'drift' ? `${text} ` : text);
      if (kind === 'unsampled') messages.push(message);
      else messages.push({ ...message, completionTokenIds: kind === 'length-cut' ? ids : [...ids, eos] });
    }
  }
  return messages;
}

/** The tokenizer with its template renders counted. */
function counting(tokenizer: ChatTokenizer): { tokenizer: ChatTokenizer; renders: () => number } {
  let renders = 0;
  return {
    tokenizer: {
      ...tokenizer,
      applyChatTemplate: (messages, options) => {
        renders++;
        return tokenizer.applyChatTemplate(messages, options);
      },
    },
    renders: () => renders,
  };
}

const cases: [string, ChatTokenizer, number][] = [
  ['tiny', tiny, files.specialTokens.imEnd],
  ['Qwen3', qwen, 151645],
];

describe.each(cases)('renderForTraining equals the per-prompt render (%s)', (_name, tokenizer, eos) => {
  it.each([1, 2, 5])(
    'on %i cycles of the weather episode, with the same ids, mask, spans and drift',
    (cycles) => {
      const messages = longEpisode(tokenizer, cycles, eos);
      for (const trainOnUnsampled of [false, true]) {
        const input: TrainingRenderInput = { messages, tools: episode.tools, trainOnUnsampled };
        const linear = renderForTraining(tokenizer, input);
        expect(linear).toEqual(renderByPrompts(tokenizer, input));
        expect(linear.spans).toHaveLength(3 * cycles);
        expect(linear.drift.length).toBeGreaterThan(0); // the 'drift' turns differ, so the comparison covers drift
      }
    },
  );

  it('renders the template four times whatever the number of turns (the old render: 1 + turns)', () => {
    for (const cycles of [1, 5]) {
      const input = { messages: longEpisode(tokenizer, cycles, eos), tools: episode.tools };
      const linear = counting(tokenizer);
      renderForTraining(linear.tokenizer, input);
      // F, the first assistant turn's prompt with and without the generation prompt, the last turn's prompt.
      expect(linear.renders()).toBe(4);
      const old = counting(tokenizer);
      renderByPrompts(old.tokenizer, input);
      expect(old.renders()).toBe(1 + 3 * cycles);
    }
  });
});

describe('renderForTraining fails where the per-prompt render failed', () => {
  const thinkingPrompt = createTokenizer(files.tokenizerJson, {
    ...files.tokenizerConfig,
    chat_template:
      '{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}' +
      '{% if add_generation_prompt %}<|im_start|>assistant\n<think></think>{% endif %}',
  });
  const failing: [string, ChatTokenizer, TrainingRenderInput][] = [
    [
      'a generation prompt the history lacks',
      thinkingPrompt,
      { messages: longEpisode(tiny, 2, files.specialTokens.imEnd).filter((m) => m.role !== 'tool') },
    ],
    [
      'Qwen3 with thinking off',
      qwen,
      { messages: longEpisode(qwen, 2, 151645), tools: episode.tools, extra: { enable_thinking: false } },
    ],
  ];
  it.each(failing)('%s: the same turn is refused', (_name, tokenizer, input) => {
    const turnOf = (render: () => unknown): number | undefined => {
      try {
        render();
      } catch (error) {
        if (error instanceof TemplatePrefixError) return error.messageIndex;
        throw error;
      }
      return undefined;
    };
    const old = turnOf(() => renderByPrompts(tokenizer, input));
    expect(old).toBeDefined();
    expect(turnOf(() => renderForTraining(tokenizer, input))).toBe(old);
  });

  it('checks the last turn’s prompt by rendering it, and names the turn whose prompt is not a prefix', () => {
    // The first turn's prompt is a prefix of F; the second's is not (its generation prompt adds
    // <think></think> once a second user turn is there). The G rule alone would place it after the
    // plain `<|im_start|>assistant\n`; the render of the last prompt shows the break, at message 3.
    const varying = createTokenizer(files.tokenizerJson, {
      ...files.tokenizerConfig,
      chat_template:
        '{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}' +
        '{% if add_generation_prompt %}<|im_start|>assistant\n{% if messages | length > 2 %}<think></think>{% endif %}{% endif %}',
    });
    const messages: TrainingMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Yo' },
      { role: 'user', content: 'Again' },
      { role: 'assistant', content: 'Yo' },
    ];
    expect(() => renderByPrompts(varying, { messages })).toThrow(/message 3/);
    expect(() => renderForTraining(varying, { messages })).toThrow(/message 3 for training: .*not a prefix/);
  });

  it('falls back to rendering every prompt when the last turn’s prompt ends elsewhere than the G rule says', () => {
    // From the second assistant turn on, the template opens the turn with <think></think> in both the
    // history and the generation prompt: every prompt is a prefix of F, but G (from the first turn)
    // ends before the block, so the last turn's render disagrees and every prompt is rendered.
    const growing = createTokenizer(files.tokenizerJson, {
      ...files.tokenizerConfig,
      chat_template:
        '{% for m in messages %}<|im_start|>{{ m.role }}\n' +
        "{% if m.role == 'assistant' and loop.index0 > 2 %}<think></think>{% endif %}" +
        '{{ m.content }}<|im_end|>\n{% endfor %}' +
        '{% if add_generation_prompt %}<|im_start|>assistant\n{% if messages | length > 2 %}<think></think>{% endif %}{% endif %}',
    });
    const eos = files.specialTokens.imEnd;
    const messages: TrainingMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Yo', completionTokenIds: [...tiny.encode('Yo'), eos] },
      { role: 'user', content: 'Again' },
      { role: 'assistant', content: 'Yo', completionTokenIds: [...tiny.encode('Yo'), eos] },
    ];
    const render = renderForTraining(growing, { messages });
    expect(render).toEqual(renderByPrompts(growing, { messages }));
    expect(render.drift).toEqual([]); // the body after the rendered prompt is "Yo", as sampled
  });
});
