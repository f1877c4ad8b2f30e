import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { type ChatTokenizer, createTokenizer } from './chat-tokenizer.ts';
import { renderForTraining, TemplatePrefixError, type TrainingMessage } from './render-for-training.ts';
import { loadQwenTokenizer, weatherEpisode } from './test-fixtures.ts';
import { tinyTokenizerFiles } from './tiny-tokenizer.ts';

const files = tinyTokenizerFiles();
const tiny = createTokenizer(files.tokenizerJson, files.tokenizerConfig);
const qwen = loadQwenTokenizer();
const episode = weatherEpisode();
const assistantIndexes = [2, 5, 7];

/** The fixture's messages, each assistant turn carrying `sampled(output k)` as its stored ids. */
function withSampledIds(sampled: (output: string, turn: number) => number[]): TrainingMessage[] {
  return episode.messages.map((message, index) => {
    const turn = assistantIndexes.indexOf(index);
    return turn === -1
      ? message
      : { ...message, completionTokenIds: sampled(episode.outputs[turn] as string, turn) };
  });
}

/** Mask expected from the spans alone: 1 inside some span, 0 elsewhere. */
function maskFromSpans(length: number, spans: readonly { start: number; end: number }[]): number[] {
  return Array.from({ length }, (_, at) => (spans.some((span) => at >= span.start && at < span.end) ? 1 : 0));
}

function checkSpliced(tokenizer: ChatTokenizer, messages: TrainingMessage[]) {
  const render = renderForTraining(tokenizer, { messages, tools: episode.tools });
  expect(render.drift).toEqual([]);
  expect(render.spans.map((span) => span.messageIndex)).toEqual(assistantIndexes);
  for (const span of render.spans) {
    expect(render.ids.slice(span.start, span.end)).toEqual(messages[span.messageIndex]?.completionTokenIds);
  }
  expect(render.assistantMask).toEqual(maskFromSpans(render.ids.length, render.spans));
  // With no drift and turn boundaries on special tokens, splicing reproduces tokenizing the whole render.
  expect(render.ids).toEqual(tokenizer.encodeChat(messages, { tools: episode.tools }));
  return render;
}

describe('renderForTraining with the tiny tokenizer', () => {
  const eos = files.specialTokens.imEnd;

  it('splices the sampled ids of every assistant turn and masks exactly them', () => {
    const messages = withSampledIds((output) => [...tiny.encode(output), eos]);
    const render = checkSpliced(tiny, messages);
    const sampledCount = messages.reduce(
      (sum, message) => sum + (message.completionTokenIds?.length ?? 0),
      0,
    );
    expect(render.assistantMask.reduce((sum, bit) => sum + bit, 0)).toBe(sampledCount);
    // Every masked run decodes to a turn's text followed by the sampled <|im_end|>.
    for (const [turn, span] of render.spans.entries()) {
      expect(tiny.decode(render.ids.slice(span.start, span.end))).toBe(`${episode.outputs[turn]}<|im_end|>`);
      expect(render.assistantMask[span.start - 1]).toBe(0); // the "\n" after <|im_start|>assistant is context
    }
  });

  it('keeps stored ids that differ from re-tokenizing, and reports the drift', () => {
    const messages: TrainingMessage[] = [
      { role: 'user', content: 'Say hi.' },
      { role: 'assistant', content: 'Hi.', completionTokenIds: [72, 105, 33, eos] }, // "Hi!"
    ];
    const render = renderForTraining(tiny, { messages });
    // Stored "Hi!" = [72, 105, 33] vs rendered "Hi." = [72, 105, 46]: common prefix 2, suffix 0, so 3 − 2 = 1 differs.
    expect(render.drift).toEqual([
      { messageIndex: 1, storedIds: [72, 105, 33], retokenizedIds: [72, 105, 46], differingTokens: 1 },
    ]);
    const [span] = render.spans;
    expect(render.ids.slice(span?.start, span?.end)).toEqual([72, 105, 33, eos]);
    expect(tiny.decode(render.ids)).toBe(
      '<|im_start|>user\nSay hi.<|im_end|>\n<|im_start|>assistant\nHi!<|im_end|>\n',
    );
  });

  it('reports a compact JSON call that the template re-renders with spaces as drift', () => {
    const compact = '<tool_call>{"name":"add","arguments":{"a":18,"b":21}}</tool_call>';
    const messages: TrainingMessage[] = withSampledIds((output, turn) =>
      turn === 1
        ? [...tiny.encode(`Adding the two temperatures.\n${compact}`), eos]
        : [...tiny.encode(output), eos],
    );
    const render = renderForTraining(tiny, { messages, tools: episode.tools });
    expect(render.drift.map((entry) => entry.messageIndex)).toEqual([5]);
    const span = render.spans[1];
    expect(render.ids.slice(span?.start, span?.end)).toEqual(messages[5]?.completionTokenIds);
    expect(render.drift[0]?.differingTokens).toBeGreaterThan(0);
  });

  it('leaves the template’s end-of-turn token as context when the turn was cut by length', () => {
    const messages: TrainingMessage[] = [
      { role: 'user', content: 'Count.' },
      { role: 'assistant', content: 'one two', completionTokenIds: tiny.encode('one two') },
    ];
    const render = renderForTraining(tiny, { messages });
    const [span] = render.spans;
    expect(render.ids[span?.end ?? -1]).toBe(eos);
    expect(render.assistantMask[span?.end ?? -1]).toBe(0);
    expect(render.assistantMask.reduce((sum, bit) => sum + bit, 0)).toBe(tiny.encode('one two').length);
  });

  it('masks assistant turns without sampled ids only when asked', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Yo' },
    ];
    const context = renderForTraining(tiny, { messages });
    // "Yo" = 'Y' 89, 'o' 111 (no merge), then <|im_end|>.
    const [span] = context.spans;
    expect(span).toMatchObject({ messageIndex: 1, sampled: false });
    expect(context.ids.slice(span?.start, span?.end)).toEqual([89, 111, eos]);
    expect(context.assistantMask.every((bit) => bit === 0)).toBe(true);
    const trained = renderForTraining(tiny, { messages, trainOnUnsampled: true });
    expect(trained.assistantMask).toEqual(maskFromSpans(trained.ids.length, trained.spans));
  });

  it('stops with a clear error when the template breaks the prefix property', () => {
    const thinking = createTokenizer(files.tokenizerJson, {
      ...files.tokenizerConfig,
      chat_template:
        '{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}' +
        '{% if add_generation_prompt %}<|im_start|>assistant\n<think></think>{% endif %}',
    });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Yo' },
    ];
    expect(() => renderForTraining(thinking, { messages })).toThrow(TemplatePrefixError);
    expect(() => renderForTraining(thinking, { messages })).toThrow(
      /message 1 for training: .*not a prefix.*character 52/,
    ); // 12 + 5 + 2 + 10 + 1 + 12 + 10 characters agree
  });

  it('rejects stored ids that are not token ids', () => {
    const messages: TrainingMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Yo', completionTokenIds: [89, 1.5] },
    ];
    expect(() => renderForTraining(tiny, { messages })).toThrow(/message 1: completionTokenIds\[1\]/);
  });
});

describe('renderForTraining with Qwen', () => {
  const eos = 151645;

  it('splices the sampled ids of every assistant turn and masks exactly them', () => {
    // Qwen3 in thinking mode opens each answer with a think block; its template renders the last
    // assistant turn with one, so a faithful sample of that turn starts with the (empty) block.
    const messages = withSampledIds((output, turn) => {
      const text = turn === 2 ? `<think>\n\n</think>\n\n${output}` : output;
      return [...qwen.encode(text), eos];
    });
    checkSpliced(qwen, messages);
  });

  it('refuses Qwen3 with thinking off: earlier turns lose the empty think block their prompt had', () => {
    const messages = withSampledIds((output) => [...qwen.encode(output), eos]);
    const render = () =>
      renderForTraining(qwen, { messages, tools: episode.tools, extra: { enable_thinking: false } });
    expect(render).toThrow(TemplatePrefixError);
    expect(render).toThrow(/cannot render message 2 for training/);
  });
});
