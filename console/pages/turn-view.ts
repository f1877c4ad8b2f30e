// One stored turn as HTML: its text, tool calls with their arguments (pretty when they are JSON,
// flagged when not: that is the model's mistake to see), tool results and errors, and for assistant
// turns the sampled tokens shaded by their sampling probability, with who served the turn and how long
// it took. Every string from the turn is escaped by `html`.
import type { TurnRow } from '../../db/schema/turns.ts';
import { toolErrorMeanings } from '../../protocol/tool-error-code.ts';
import { turnMetadataSchema, type TurnMetadata } from '../../protocol/turn-metadata.ts';
import { duration } from '../format.ts';
import { type Html, html } from '../html.ts';

export interface TurnViewOptions {
  /** Side-by-side columns: text and tool calls only. */
  readonly compact: boolean;
  readonly tokenText?: (ids: readonly number[]) => readonly string[];
}

function metadataOf(turn: TurnRow): TurnMetadata {
  const parsed = turnMetadataSchema.safeParse(turn.metadata ?? {});
  return parsed.success ? parsed.data : {};
}

function toolCallView(call: NonNullable<TurnRow['toolCalls']>[number]): Html {
  let pretty: string | undefined;
  try {
    pretty = JSON.stringify(JSON.parse(call.function.arguments), null, 2);
  } catch {
    pretty = undefined;
  }
  return html`<div class="tool-call"><span class="muted">call</span> <b>${call.function.name}</b> <span class="muted">${call.id}</span>${
    pretty === undefined
      ? html` <span class="badge error">arguments are not JSON</span><pre>${call.function.arguments}</pre>`
      : html`<pre>${pretty}</pre>`
  }</div>`;
}

/** The probability bucket 0–9 of a logprob (p = e^logprob), for the shading classes. */
export function probabilityBucket(logprob: number): number {
  const p = Math.exp(logprob);
  return Math.max(0, Math.min(9, Math.floor(p * 10)));
}

function tokenStrip(turn: TurnRow, tokenText: TurnViewOptions['tokenText']): Html {
  const ids = turn.completionTokenIds ?? [];
  if (ids.length === 0) return html``;
  const logprobs = turn.completionLogprobs ?? [];
  const texts = tokenText ? tokenText(ids) : undefined;
  const spans = ids.map((id, index) => {
    const logprob = logprobs[index];
    const text = texts?.[index] ?? `#${id}`;
    if (logprob === undefined)
      return html`<span class="tok unknown" title="id ${id} · no logprob">${text}</span>`;
    const p = Math.exp(logprob);
    return html`<span class="tok p${probabilityBucket(logprob)}" data-logprob="${logprob}" title="id ${id} · logprob ${logprob.toFixed(3)} · p ${p.toFixed(3)}">${text}</span>`;
  });
  const low = logprobs.filter((logprob) => Math.exp(logprob) < 0.5).length;
  return html`<div class="muted">${ids.length} sampled token(s)${logprobs.length > 0 ? `, ${low} below p 0.5` : ', no logprobs'}${texts ? '' : ' (token ids: run the console with --model DIR to see their text)'}</div>
<div class="tokens" data-token-count="${ids.length}">${spans}</div>`;
}

function assistantMeta(turn: TurnRow, metadata: TurnMetadata): Html {
  const parts: (string | Html)[] = [];
  if (turn.servedBy) parts.push(html`served by <b>${turn.servedBy}</b>`);
  if (metadata.replica) parts.push(html`replica ${metadata.replica}`);
  if (turn.latencyMs !== null) parts.push(`latency ${duration(turn.latencyMs)}`);
  if (turn.promptTokenCount !== null) parts.push(`prompt ${turn.promptTokenCount} tokens`);
  if (metadata.finishReason) parts.push(`finish ${metadata.finishReason}`);
  if (metadata.attempts && metadata.attempts > 1) parts.push(`${metadata.attempts} attempts`);
  if (metadata.recordedBy) parts.push(`recorded by ${metadata.recordedBy}`);
  return html`<div class="meta">${parts.map((part) => html`<span>${part}</span>`)}${
    metadata.tokenExact === false
      ? html`<span class="badge drift" title="the ids were re-tokenized from the text: they may differ from what was sampled">not token-exact</span>`
      : ''
  }</div>`;
}

export function turnView(turn: TurnRow, options: TurnViewOptions): Html {
  const metadata = metadataOf(turn);
  const failed = turn.role === 'tool' && turn.toolError !== null;
  const head = html`<div class="role">#${turn.index} ${turn.role}${
    turn.role === 'tool' ? html` · ${metadata.toolName ?? 'tool'} · answers ${turn.toolCallId ?? '?'}` : ''
  }</div>`;
  const error = failed
    ? html`<div><span class="badge error">${turn.toolError}</span> <span class="muted">${toolErrorMeanings[turn.toolError as keyof typeof toolErrorMeanings] ?? ''}</span></div>`
    : '';
  const text =
    turn.content === null || turn.content === '' ? '' : html`<div class="text">${turn.content}</div>`;
  const calls = (turn.toolCalls ?? []).map(toolCallView);
  const detail =
    !options.compact && turn.role === 'assistant'
      ? html`${tokenStrip(turn, options.tokenText)}${assistantMeta(turn, metadata)}`
      : '';
  const className = `${options.compact ? '' : 'turn-card '}${turn.role}${failed ? ' failed' : ''}`;
  const inner = html`${head}${error}${text}${calls}${detail}`;
  return options.compact
    ? html`<li class="${className}" data-turn-index="${turn.index}">${inner}</li>`
    : html`<section class="${className}" data-turn-index="${turn.index}">${inner}</section>`;
}
