// The training render as it was before it became linear (commit c63f845): one template render of
// every assistant turn's prompt, each checked as a prefix of the whole conversation. Kept only as the
// reference that the linear render (model/tokenizer/render-for-training.ts) must equal, and as the
// bench's baseline. Leaves out the old input checks and error details (only the error's turn is
// compared); its types are the new file's.
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import {
  type AssistantSpan,
  type TokenDrift,
  TemplatePrefixError,
  type TrainingRender,
  type TrainingRenderInput,
} from '../../model/tokenizer/render-for-training.ts';

function differingWindow(a: readonly number[], b: readonly number[]): number {
  const shorter = Math.min(a.length, b.length);
  let prefix = 0;
  while (prefix < shorter && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  return Math.max(a.length, b.length) - prefix - suffix;
}

/** renderForTraining with every prompt rendered: quadratic in the number of assistant turns. */
export function renderByPrompts(tokenizer: ChatTokenizer, input: TrainingRenderInput): TrainingRender {
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
  let cursor = 0;

  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const prompt = tokenizer.applyChatTemplate(messages.slice(0, index), {
      tools,
      extra,
      addGenerationPrompt: true,
    });
    if (!full.startsWith(prompt)) throw new TemplatePrefixError(index, 'not a prefix');
    if (prompt.length < cursor) throw new TemplatePrefixError(index, 'inside the previous turn');
    push(tokenizer.encode(full.slice(cursor, prompt.length)), 0);

    let end: { at: number; id: number; text: string } | undefined;
    for (const token of endTokens) {
      const at = full.indexOf(token.text, prompt.length);
      if (at !== -1 && (end === undefined || at < end.at)) end = { at, ...token };
    }
    if (!end) throw new TemplatePrefixError(index, 'no end-of-turn token');
    const retokenized = tokenizer.encode(full.slice(prompt.length, end.at));
    const start = ids.length;
    const stored = message.completionTokenIds;
    if (stored) {
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
