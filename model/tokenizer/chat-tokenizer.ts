// A Hugging Face tokenizer plus its chat template behind one small interface: encode/decode, per-token
// text and bytes for streaming and logprobs, and chat rendering with tools. Built on
// @huggingface/tokenizers (tokenizer.json) and @huggingface/jinja (chat templates). Leaves out
// reading files (load-tokenizer.ts) and tool-call parsing (parse-tool-calls.ts).
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { byteLevelToBytes } from './byte-level.ts';
import { toTemplateMessages, toTemplateTools } from './to-template-messages.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export interface ChatTemplateOptions {
  readonly tools?: readonly ToolSpec[];
  /** Append the assistant turn opener (`<|im_start|>assistant\n` in ChatML). Default false. */
  readonly addGenerationPrompt?: boolean;
  /** More template variables, e.g. `{ enable_thinking: false }` for Qwen3. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

export interface ChatTokenizer {
  /** One more than the largest id the tokenizer knows; a model's vocab_size may be larger (padding). */
  readonly vocabSize: number;
  /** Ids that end generation: generation_config.json's `eos_token_id` (when given), then the config's eos token. */
  readonly eosTokenIds: readonly number[];
  /** The config's pad token, or the first eos id when it names none (Hugging Face's usual fallback). */
  readonly padTokenId: number;
  readonly bosTokenId: number | undefined;
  /** Every added token (special or not: `<tool_call>` is not special in Qwen) by its text. */
  readonly specialTokenIds: Readonly<Record<string, number>>;
  /** The template source, or undefined when tokenizer_config.json has none. */
  readonly chatTemplate: string | undefined;
  /** Ids of `text`. `addSpecialTokens` (default false) applies the post-processor (e.g. Llama's bos). */
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  /** Text of `ids`; ids the tokenizer does not know (a model's padding rows) decode to nothing. */
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Text of one token; a token holding part of a UTF-8 character decodes to U+FFFD, so stream with `tokenBytes`. */
  decodeToken(id: number): string;
  /** The bytes one token stands for (OpenAI logprobs' `bytes`); empty for unknown ids. */
  tokenBytes(id: number): Uint8Array;
  idToToken(id: number): string | undefined;
  tokenToId(token: string): number | undefined;
  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatTemplateOptions): string;
  encodeChat(messages: readonly ChatMessage[], options?: ChatTemplateOptions): number[];
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A token named in tokenizer_config.json: a string, or an AddedToken dict `{ content, … }` in older files. */
function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (isObject(value) && typeof value.content === 'string') return value.content;
  return undefined;
}

function isByteLevelDecoder(decoder: unknown): boolean {
  if (!isObject(decoder)) return false;
  if (decoder.type === 'ByteLevel') return true;
  return (
    decoder.type === 'Sequence' &&
    Array.isArray(decoder.decoders) &&
    decoder.decoders.some(isByteLevelDecoder)
  );
}

/**
 * Picks the template source: a string, or (transformers' multi-template form) a list of
 * `{ name, template }` from which `tool_use` is taken when tools are given and `default` otherwise.
 */
function templateSources(config: JsonObject, override: string | undefined): Map<string, string> {
  const sources = new Map<string, string>();
  const raw = override ?? config.chat_template;
  if (typeof raw === 'string') sources.set('default', raw);
  else if (Array.isArray(raw)) {
    for (const entry of raw) {
      if (isObject(entry) && typeof entry.name === 'string' && typeof entry.template === 'string') {
        sources.set(entry.name, entry.template);
      }
    }
  }
  return sources;
}

function generationEosIds(generationConfig: unknown): number[] {
  if (!isObject(generationConfig)) return [];
  const raw = generationConfig.eos_token_id;
  const list = Array.isArray(raw) ? raw : [raw];
  return list.filter((id): id is number => Number.isInteger(id));
}

export interface CreateTokenizerOptions {
  /** Contents of generation_config.json, for its `eos_token_id`. */
  readonly generationConfig?: unknown;
  /** A template that replaces tokenizer_config.json's (e.g. the contents of chat_template.jinja). */
  readonly chatTemplate?: string;
}

/** A ChatTokenizer from the parsed contents of tokenizer.json and tokenizer_config.json. */
export function createTokenizer(
  tokenizerJson: unknown,
  tokenizerConfig: unknown,
  options: CreateTokenizerOptions = {},
): ChatTokenizer {
  if (!isObject(tokenizerJson)) throw new TypeError('tokenizer.json must hold a JSON object');
  if (!isObject(tokenizerConfig)) throw new TypeError('tokenizer_config.json must hold a JSON object');
  let inner: Tokenizer;
  try {
    inner = new Tokenizer(tokenizerJson, tokenizerConfig);
  } catch (cause) {
    throw new Error(`tokenizer.json could not be loaded: ${errorMessage(cause)}`, { cause });
  }
  const model = inner.model;
  if (!model) throw new Error('tokenizer.json has no model');

  const specialTokenIds: Record<string, number> = {};
  for (const [id, token] of inner.get_added_tokens_decoder()) specialTokenIds[token.content] = id;

  const idOf = (name: string): number | undefined => {
    const text = tokenText(tokenizerConfig[name]);
    if (text === undefined) return undefined;
    const id = inner.token_to_id(text);
    if (id === undefined)
      throw new Error(`tokenizer_config.json names ${name} "${text}", which is not in the vocabulary`);
    return id;
  };
  const eosTokenIds = generationEosIds(options.generationConfig);
  const configEos = idOf('eos_token');
  if (configEos !== undefined && !eosTokenIds.includes(configEos)) eosTokenIds.push(configEos);
  const firstEos = eosTokenIds[0];
  if (firstEos === undefined) {
    throw new Error(
      'no end-of-sequence token: set eos_token in tokenizer_config.json or eos_token_id in generation_config.json',
    );
  }
  const padTokenId = idOf('pad_token') ?? firstEos;
  const bosTokenId = idOf('bos_token');

  const byteLevel = isByteLevelDecoder(tokenizerJson.decoder);
  const addedIds = new Set(Object.values(specialTokenIds));
  const encoder = new TextEncoder();

  const isKnown = (id: number): boolean => model.vocab[id] !== undefined;
  const checkIds = (ids: readonly number[]): number[] => {
    ids.forEach((id, index) => {
      if (!Number.isInteger(id) || id < 0)
        throw new RangeError(`token id at index ${index} is not a non-negative integer: ${id}`);
    });
    return ids.filter(isKnown);
  };

  const sources = templateSources(tokenizerConfig, options.chatTemplate);
  const compiled = new Map<string, Template>();
  const templateFor = (withTools: boolean): Template => {
    const name = withTools && sources.has('tool_use') ? 'tool_use' : 'default';
    const source = sources.get(name) ?? sources.values().next().value;
    if (source === undefined)
      throw new Error('tokenizer_config.json has no chat_template; cannot render chats');
    let template = compiled.get(source);
    if (!template) {
      try {
        template = new Template(source);
      } catch (cause) {
        throw new Error(`chat template does not parse: ${errorMessage(cause)}`, { cause });
      }
      compiled.set(source, template);
    }
    return template;
  };
  // Like transformers, templates see the special tokens the config names (and no others).
  const specialVariables: JsonObject = {};
  for (const name of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
    const text = tokenText(tokenizerConfig[name]);
    if (text !== undefined) specialVariables[name] = text;
  }

  const tokenizer: ChatTokenizer = {
    vocabSize: model.vocab.length,
    eosTokenIds,
    padTokenId,
    bosTokenId,
    specialTokenIds,
    chatTemplate: sources.get('default') ?? sources.values().next().value,
    encode(text, { addSpecialTokens = false } = {}) {
      return inner.encode(text, { add_special_tokens: addSpecialTokens }).ids;
    },
    decode(ids, { skipSpecialTokens = false } = {}) {
      const known = checkIds(ids);
      return known.length === 0 ? '' : inner.decode(known, { skip_special_tokens: skipSpecialTokens });
    },
    decodeToken(id) {
      return tokenizer.decode([id]);
    },
    tokenBytes(id) {
      checkIds([id]);
      const token = model.vocab[id];
      if (token === undefined) return new Uint8Array(0);
      if (byteLevel && !addedIds.has(id)) {
        const bytes = byteLevelToBytes(token);
        if (bytes) return bytes;
      }
      return encoder.encode(addedIds.has(id) ? token : tokenizer.decodeToken(id));
    },
    idToToken(id) {
      return model.vocab[id];
    },
    tokenToId(token) {
      return inner.token_to_id(token);
    },
    applyChatTemplate(messages, { tools, addGenerationPrompt = false, extra = {} } = {}) {
      const templateTools = toTemplateTools(tools);
      const template = templateFor(templateTools !== undefined);
      try {
        return template.render({
          ...specialVariables,
          ...extra,
          messages: toTemplateMessages(messages),
          tools: templateTools,
          add_generation_prompt: addGenerationPrompt,
        });
      } catch (cause) {
        throw new Error(`chat template failed to render: ${errorMessage(cause)}`, { cause });
      }
    },
    encodeChat(messages, options) {
      return tokenizer.encode(tokenizer.applyChatTemplate(messages, options));
    },
  };
  return tokenizer;
}
