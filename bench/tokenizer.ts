// Tokens per episode for the tiny tokenizer's variants (bytes only, default merges, plus the
// episode's tool names) beside Qwen's own tokenizer and template, on the sample weather episode;
// then encode and training-render speed, each as a ratio to a baseline timed in the same run (the
// training render's baseline: the per-prompt render it replaced, test/support/render-by-prompts.ts).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type ChatTokenizer, createTokenizer } from '../model/tokenizer/chat-tokenizer.ts';
import { renderForTraining } from '../model/tokenizer/render-for-training.ts';
import { qwenModelDir, weatherEpisode } from '../model/tokenizer/test-fixtures.ts';
import { tinyChatTemplate } from '../model/tokenizer/tiny-chat-template.ts';
import { type TinyTokenizerOptions, tinyTokenizerFiles } from '../model/tokenizer/tiny-tokenizer.ts';
import { renderByPrompts } from '../test/support/render-by-prompts.ts';

const episode = weatherEpisode();
const toolNames = ['get_weather', 'add', 'city', 'unit', 'celsius', 'temperature', 'conditions'];

function tinyVariant(options: TinyTokenizerOptions) {
  const files = tinyTokenizerFiles(options);
  return { files, tokenizer: createTokenizer(files.tokenizerJson, files.tokenizerConfig) };
}

/** Tokens of the whole episode, and of its system turn (instructions + tool signatures) alone. */
function count(tokenizer: ChatTokenizer) {
  const total = tokenizer.encodeChat(episode.messages, { tools: episode.tools }).length;
  const system = tokenizer.encodeChat(episode.messages.slice(0, 1), { tools: episode.tools }).length;
  return { total, system, turns: total - system };
}

const bytesOnly = tinyVariant({ pieces: [] });
const tiny = tinyVariant({});
const tinyTools = tinyVariant({ extraPieces: toolNames });
const qwenConfig = JSON.parse(readFileSync(`${qwenModelDir()}/tokenizer_config.json`, 'utf8')) as Record<
  string,
  unknown
>;
const qwenJson = JSON.parse(readFileSync(`${qwenModelDir()}/tokenizer.json`, 'utf8')) as unknown;
const qwen = createTokenizer(qwenJson, qwenConfig);
const qwenWithTinyTemplate = createTokenizer(qwenJson, { ...qwenConfig, chat_template: tinyChatTemplate });

const rows: [string, string, ReturnType<typeof count>][] = [
  ['tiny, bytes only (baseline)', `${bytesOnly.files.tokenCount}`, count(bytesOnly.tokenizer)],
  [
    'tiny, default merges',
    `${tiny.files.tokenCount} → vocab_size ${tiny.files.vocabSize}`,
    count(tiny.tokenizer),
  ],
  [
    'tiny + tool-name pieces',
    `${tinyTools.files.tokenCount} → vocab_size ${tinyTools.files.vocabSize}`,
    count(tinyTools.tokenizer),
  ],
  ['Qwen tokenizer, tiny template', `${qwen.vocabSize}`, count(qwenWithTinyTemplate)],
  ['Qwen tokenizer, Qwen3 template', `${qwen.vocabSize}`, count(qwen)],
];
const baseline = rows[0]?.[2].total ?? 1;
console.log(`Sample episode: ${episode.messages.length} messages, ${episode.tools.length} tools.`);
console.log(
  'variant                          | tokens (ids used)              | episode | system+tools | rest | vs bytes',
);
for (const [name, vocab, tokens] of rows) {
  const ratio = (tokens.total / baseline).toFixed(2);
  console.log(
    `${name.padEnd(32)} | ${vocab.padEnd(30)} | ${String(tokens.total).padStart(7)} | ${String(tokens.system).padStart(12)} | ${String(tokens.turns).padStart(4)} | ${ratio}×`,
  );
}

/** Median milliseconds of `fn` over `runs` runs after one warm-up. */
function time(fn: () => void, runs = 15): number {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(runs / 2)] ?? Number.NaN;
}

const text = tiny.tokenizer.applyChatTemplate(episode.messages, { tools: episode.tools }).repeat(50);
const qwenEncode = time(() => qwen.encode(text));
const tinyEncode = time(() => tiny.tokenizer.encode(text));
console.log(
  `\nencode ${text.length} chars: tiny ${tinyEncode.toFixed(1)} ms vs Qwen ${qwenEncode.toFixed(1)} ms (baseline) = ${(tinyEncode / qwenEncode).toFixed(2)}×`,
);

let turn = 0;
const sampled = episode.messages.map((message) => {
  if (message.role !== 'assistant') return message;
  const output = episode.outputs[turn++] ?? '';
  return {
    ...message,
    completionTokenIds: [...tiny.tokenizer.encode(output), tiny.files.specialTokens.imEnd],
  };
});
const plain = time(() => tiny.tokenizer.encodeChat(episode.messages, { tools: episode.tools }));
const training = time(() => renderForTraining(tiny.tokenizer, { messages: sampled, tools: episode.tools }));
console.log(
  `renderForTraining: ${training.toFixed(2)} ms vs encodeChat ${plain.toFixed(2)} ms (baseline) = ${(training / plain).toFixed(1)}× (three more renders: the first prompt with and without the generation prompt, the last prompt)`,
);

// The episode's six-message cycle repeated (a new user question between rounds): 3 assistant turns a round.
for (const rounds of [1, 4, 16]) {
  const messages = [...sampled.slice(0, 2)];
  for (let round = 0; round < rounds; round++) {
    if (round > 0) messages.push({ role: 'user', content: `And again, round ${round + 1}?` });
    messages.push(...sampled.slice(2));
  }
  const input = { messages, tools: episode.tools };
  const linear = time(() => renderForTraining(tiny.tokenizer, input));
  const perPrompt = time(() => renderByPrompts(tiny.tokenizer, input));
  console.log(
    `renderForTraining, ${String(3 * rounds).padStart(2)} assistant turns: ${linear.toFixed(2)} ms vs per-prompt render ${perPrompt.toFixed(2)} ms (baseline) = ${(linear / perPrompt).toFixed(2)}×`,
  );
}
