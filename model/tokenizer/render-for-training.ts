// Renders a finished conversation into one token sequence for the policy-gradient loss: template
// text as context, and each sampled assistant turn as the exact ids the model produced, with a mask
// over them. Leaves out logprobs, batching and truncation (the trainer's job).
//
// How assistant spans are found (text positions in the full render F, no knowledge of the template):
//   1. F = the whole conversation rendered without a generation prompt.
//   2. For assistant message i, P = messages[0..i) rendered with add_generation_prompt: the prompt the
//      model was sampled from. P must be a prefix of F (the "prefix property"); otherwise the template
//      renders history differently from how it prompts (Qwen3 drops `<think>` blocks of earlier turns)
//      and no single sequence is faithful to every turn, so we stop with TemplatePrefixError.
//   3. The turn's body runs from the end of P to the first end-of-turn token text (any eos id's text,
//      e.g. `<|im_end|>`) after it. The stored ids replace body + end-of-turn token when they end with
//      an eos id (sampled stop), else replace the body alone (a length cut: the template's end-of-turn
//      token follows as context, mask 0). Text between turns is tokenized on its own; its boundaries
//      sit on special tokens, except the one after P, which is where the prompt ended when sampling.
// Drift: when the stored ids (without their eos) differ from encode(body), the sequence keeps the
// stored ids (what the model produced) and `drift` records both, e.g. a compact JSON call that the
// template re-renders with spaces.
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import type { ChatTokenizer } from './chat-tokenizer.ts';

/** A chat message; assistant messages may carry the ids sampled for them (the turn record's `completionTokenIds`). */
export type TrainingMessage = ChatMessage & { readonly completionTokenIds?: readonly number[] };

export interface TrainingRenderInput {
  readonly messages: readonly TrainingMessage[];
  readonly tools?: readonly ToolSpec[];
  /** Extra template variables, as in applyChatTemplate (e.g. `{ enable_thinking: false }`). */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** Also set the mask on assistant messages that carry no sampled ids (scripted or other-policy turns). Default false: only what this policy sampled is trained on. */
  readonly trainOnUnsampled?: boolean;
}

export interface AssistantSpan {
  readonly messageIndex: number;
  /** Token positions [start, end) of the turn: its body and, when sampled or retokenized, its end-of-turn token. */
  readonly start: number;
  readonly end: number;
  /** Whether the span holds stored sampled ids (true) or the re-tokenized text (false). */
  readonly sampled: boolean;
}

export interface TokenDrift {
  readonly messageIndex: number;
  readonly storedIds: readonly number[];
  readonly retokenizedIds: readonly number[];
  /** Length of the window that differs: max(lengths) − common prefix − common suffix. */
  readonly differingTokens: number;
}

export interface TrainingRender {
  readonly ids: number[];
  /** 1 on tokens to train on (see `trainOnUnsampled`), 0 on context. Same length as ids. */
  readonly assistantMask: number[];
  readonly spans: AssistantSpan[];
  readonly drift: TokenDrift[];
}

/** The chat template renders earlier turns differently from the prompt it sampled them with. */
export class TemplatePrefixError extends Error {
  override readonly name = 'TemplatePrefixError';
  readonly code = 'template-prefix';
  constructor(
    readonly messageIndex: number,
    detail: string,
  ) {
    super(`cannot render message ${messageIndex} for training: ${detail}`);
  }
}

function differingWindow(a: readonly number[], b: readonly number[]): number {
  const shorter = Math.min(a.length, b.length);
  let prefix = 0;
  while (prefix < shorter && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  return Math.max(a.length, b.length) - prefix - suffix;
}

function divergence(prompt: string, full: string): string {
  let at = 0;
  while (at < prompt.length && prompt[at] === full[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 20), at + 30));
  return (
    `the prompt it was sampled from (rendered with add_generation_prompt) is not a prefix of the whole ` +
    `conversation; they part at character ${at}: prompt ${around(prompt)}, conversation ${around(full)}`
  );
}

/** One sequence for training, with the mask, spans and drift described in the file header. */
export function renderForTraining(tokenizer: ChatTokenizer, input: TrainingRenderInput): TrainingRender {
  const { messages, tools, extra, trainOnUnsampled = false } = input;
  const full = tokenizer.applyChatTemplate(messages, { tools, extra });
  const endTokens = tokenizer.eosTokenIds.flatMap((id) => {
    const text = tokenizer.idToToken(id);
    return text === undefined ? [] : [{ id, text }];
  });

  const ids: number[] = [];
  const assistantMask: number[] = [];
  const spans: AssistantSpan[] = [];
  const drift: TokenDrift[] = [];
  const push = (tokens: readonly number[], mask: 0 | 1) => {
    for (const token of tokens) {
      ids.push(token);
      assistantMask.push(mask);
    }
  };
  let cursor = 0; // characters of `full` already turned into ids

  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const prompt = tokenizer.applyChatTemplate(messages.slice(0, index), {
      tools,
      extra,
      addGenerationPrompt: true,
    });
    if (!full.startsWith(prompt)) throw new TemplatePrefixError(index, divergence(prompt, full));
    if (prompt.length < cursor) {
      throw new TemplatePrefixError(index, 'its prompt ends inside the previous assistant turn');
    }
    push(tokenizer.encode(full.slice(cursor, prompt.length)), 0);

    let end: { at: number; id: number; text: string } | undefined;
    for (const token of endTokens) {
      const at = full.indexOf(token.text, prompt.length);
      if (at !== -1 && (end === undefined || at < end.at)) end = { at, ...token };
    }
    if (!end) {
      const names = endTokens.map((token) => token.text).join(', ');
      throw new TemplatePrefixError(
        index,
        `no end-of-turn token (${names}) follows its text in the rendering`,
      );
    }
    const retokenized = tokenizer.encode(full.slice(prompt.length, end.at));
    const start = ids.length;
    const stored = message.completionTokenIds;
    if (stored) {
      stored.forEach((id, position) => {
        if (!Number.isInteger(id) || id < 0) {
          throw new RangeError(`message ${index}: completionTokenIds[${position}] is not a token id: ${id}`);
        }
      });
      const last = stored[stored.length - 1];
      const sampledStop = last !== undefined && tokenizer.eosTokenIds.includes(last);
      const body = sampledStop ? stored.slice(0, -1) : [...stored];
      const differing = differingWindow(body, retokenized);
      if (differing > 0) {
        drift.push({
          messageIndex: index,
          storedIds: body,
          retokenizedIds: retokenized,
          differingTokens: differing,
        });
      }
      push(stored, 1);
      cursor = sampledStop ? end.at + end.text.length : end.at;
      spans.push({ messageIndex: index, start, end: ids.length, sampled: true });
    } else {
      push([...retokenized, end.id], trainOnUnsampled ? 1 : 0);
      cursor = end.at + end.text.length;
      spans.push({ messageIndex: index, start, end: ids.length, sampled: false });
    }
  });
  push(tokenizer.encode(full.slice(cursor)), 0);
  return { ids, assistantMask, spans, drift };
}
