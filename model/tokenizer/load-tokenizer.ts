// Loads a ChatTokenizer from a Hugging Face model directory. Leaves out everything about the model
// weights and downloading (nothing is fetched: the directory must hold the files).
//
// Reads tokenizer.json and tokenizer_config.json (required), generation_config.json (optional, for
// its eos ids) and chat_template.jinja (optional; newer transformers save the template there, and
// it takes precedence over the config's, as in transformers).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChatTokenizer, createTokenizer } from './chat-tokenizer.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export { type ChatTokenizer, createTokenizer } from './chat-tokenizer.ts';

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}: ${errorMessage(cause)}`, { cause });
  }
}

function parseJson(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new Error(`${path} is not valid JSON: ${errorMessage(cause)}`, { cause });
  }
}

async function readJson(dir: string, name: string, required: true): Promise<unknown>;
async function readJson(dir: string, name: string, required: false): Promise<unknown | undefined>;
async function readJson(dir: string, name: string, required: boolean): Promise<unknown> {
  const path = join(dir, name);
  const text = await readOptional(path);
  if (text === undefined) {
    if (required) throw new Error(`${path} not found: a Hugging Face model directory needs ${name}`);
    return undefined;
  }
  return parseJson(path, text);
}

/** The tokenizer of the model directory `dir`. */
export async function loadTokenizer(dir: string): Promise<ChatTokenizer> {
  const reads = await Promise.allSettled([
    readJson(dir, 'tokenizer.json', true),
    readJson(dir, 'tokenizer_config.json', true),
    readJson(dir, 'generation_config.json', false),
    readOptional(join(dir, 'chat_template.jinja')),
  ]);
  // Report the first failing file in this fixed order, not whichever read happened to fail first.
  const failed = reads.find((read) => read.status === 'rejected');
  if (failed) throw failed.reason;
  const [tokenizerJson, tokenizerConfig, generationConfig, chatTemplate] = reads.map((read) =>
    read.status === 'fulfilled' ? read.value : undefined,
  );
  try {
    return createTokenizer(tokenizerJson, tokenizerConfig, {
      generationConfig,
      chatTemplate: chatTemplate as string | undefined, // readOptional yields text or undefined
    });
  } catch (cause) {
    throw new Error(`tokenizer in ${dir}: ${errorMessage(cause)}`, { cause });
  }
}
