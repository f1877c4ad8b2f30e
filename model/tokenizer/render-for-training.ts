// Renders a finished conversation into one token sequence for the policy-gradient loss: template
// text as context, and each sampled assistant turn as the exact ids the model produced, with a mask
// over them. Leaves out logprobs, batching and truncation (the trainer's job).
//
// How assistant spans are found (text positions in the full render F, no knowledge of the template):
//   1. F = the whole conversation rendered without a generation prompt: the only render of it.
//   2. For assistant message i, the prompt the model was sampled from is P = messages[0..i) rendered
//      with add_generation_prompt. P must be a prefix of F (the "prefix property"); otherwise the
//      template renders history differently from how it prompts (Qwen3 drops `<think>` blocks of
//      earlier turns) and no single sequence is faithful to every turn, so we stop with
//      TemplatePrefixError. P is rendered for the first assistant turn only, and, with the same
//      messages rendered without the generation prompt, gives that prompt's text G ("the G rule"): a
//      later P ends where the first G at or after the previous turn's end does, since templates append
//      history message by message and G after it. The last turn's P is rendered as a check (it holds
//      every earlier turn). Where the rule fails (no G follows a turn, the last P ends elsewhere, or a
//      P is not a prefix), every P is rendered, so the result or error is the per-prompt one. So F and
//      the last P are rendered once each and the first prompt twice: linear in the number of turns,
//      where rendering every prompt was quadratic. What the rule does not see: a user or tool text
//      holding G verbatim (it holds special tokens such as `<|im_start|>assistant`), and a template
//      that renders the history of a middle turn's prompt differently but not the last one's (Qwen3
//      only for two assistant messages in a row, which episodes do not produce).
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

/** The G rule did not place the last turn's prompt where its render ends: the rule does not hold here. */
class GenerationPromptMismatch extends Error {}

/**
 * Where each assistant turn's prompt ends in F (file header, step 2). With `everyPrompt` each turn's
 * prompt is rendered, which is the reference the G rule must agree with.
 */
function promptLocator(
  tokenizer: ChatTokenizer,
  input: TrainingRenderInput,
  full: string,
  everyPrompt: boolean,
) {
  const { messages, tools, extra } = input;
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  let generationPrompt: string | undefined; // G, once the first turn's prompt has been rendered
  /** P rendered and checked against F; returns its length. */
  const rendered = (index: number, cursor: number): number => {
    const history = messages.slice(0, index);
    const prompt = tokenizer.applyChatTemplate(history, { tools, extra, addGenerationPrompt: true });
    if (!full.startsWith(prompt)) throw new TemplatePrefixError(index, divergence(prompt, full));
    if (prompt.length < cursor) {
      throw new TemplatePrefixError(index, 'its prompt ends inside the previous assistant turn');
    }
    if (generationPrompt === undefined && !everyPrompt) {
      const bare = tokenizer.applyChatTemplate(history, { tools, extra });
      // An empty G, or one that does not extend the bare render, locates nothing: every prompt is rendered.
      generationPrompt = prompt.startsWith(bare) ? prompt.slice(bare.length) : '';
    }
    return prompt.length;
  };
  return (index: number, cursor: number): number => {
    if (everyPrompt || generationPrompt === undefined || generationPrompt === '')
      return rendered(index, cursor);
    const at = full.indexOf(generationPrompt, cursor);
    if (at === -1) return rendered(index, cursor);
    const end = at + generationPrompt.length;
    // The last turn's prompt is rendered too: it holds every earlier turn, so a template whose history
    // or generation prompt changes over the episode shows it here.
    if (index === lastAssistant && rendered(index, cursor) !== end) throw new GenerationPromptMismatch();
    return end;
  };
}

/** First end-of-turn token text at or after a position; one scan of F over all eos texts at once. */
function endLocator(tokenizer: ChatTokenizer, full: string) {
  const endTokens = tokenizer.eosTokenIds.flatMap((id) => {
    const text = tokenizer.idToToken(id);
    return text === undefined ? [] : [{ id, text }];
  });
  // Alternatives in eos order: at the leftmost match the earlier id wins, as searching id by id did.
  const byText = new Map<string, number>();
  for (const token of endTokens) if (!byText.has(token.text)) byText.set(token.text, token.id);
  const escaped = [...byText.keys()].map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = escaped.length > 0 ? new RegExp(escaped.join('|'), 'g') : undefined;
  const names = endTokens.map((token) => token.text).join(', ');
  return (index: number, from: number): { at: number; id: number; text: string } => {
    if (pattern) {
      pattern.lastIndex = from;
      const match = pattern.exec(full);
      if (match) return { at: match.index, id: byText.get(match[0]) as number, text: match[0] };
    }
    throw new TemplatePrefixError(index, `no end-of-turn token (${names}) follows its text in the rendering`);
  };
}

/** One sequence for training, with the mask, spans and drift described in the file header. */
export function renderForTraining(tokenizer: ChatTokenizer, input: TrainingRenderInput): TrainingRender {
  const full = tokenizer.applyChatTemplate(input.messages, { tools: input.tools, extra: input.extra });
  try {
    return splice(tokenizer, input, full, promptLocator(tokenizer, input, full, false));
  } catch (error) {
    if (!(error instanceof TemplatePrefixError || error instanceof GenerationPromptMismatch)) throw error;
    // The G rule failed somewhere: render every prompt, so that the result, or the error naming the
    // first turn that breaks the prefix property, is the one rendering each prompt gives.
    return splice(tokenizer, input, full, promptLocator(tokenizer, input, full, true));
  }
}

function splice(
  tokenizer: ChatTokenizer,
  input: TrainingRenderInput,
  full: string,
  promptEnd: (index: number, cursor: number) => number,
): TrainingRender {
  const { messages, trainOnUnsampled = false } = input;
  const endOfTurn = endLocator(tokenizer, full);

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
    const bodyStart = promptEnd(index, cursor);
    push(tokenizer.encode(full.slice(cursor, bodyStart)), 0);
    const end = endOfTurn(index, bodyStart);
    const retokenized = tokenizer.encode(full.slice(bodyStart, end.at));
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
