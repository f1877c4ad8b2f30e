// Parses model output in the Hermes/Qwen convention, `<tool_call>{"name": …, "arguments": {…}}</tool_call>`,
// into OpenAI-style tool calls. Never throws: a malformed call stays in the content as the text the
// model wrote, and `errors` says what is wrong with it, so the episode loop can show the model its
// mistake. Leaves out other conventions (Llama's bare JSON, Mistral's [TOOL_CALLS]).
import type { ToolCall } from '../../protocol/chat.ts';
import { errorMessage } from '../../protocol/error-message.ts';

const openTag = '<tool_call>';
const closeTag = '</tool_call>';

export interface ParsedAssistantOutput {
  /** Text outside well-formed calls (malformed calls included verbatim), trimmed; null when empty. */
  content: string | null;
  toolCalls: ToolCall[];
  /** One line per problem, naming the call by its 1-based position among the `<tool_call>` blocks. */
  errors: string[];
}

export interface ParseOptions {
  /** Mixed into call ids, e.g. the turn's index, so identical outputs in one episode still get distinct ids. */
  readonly idSalt?: string;
}

/** FNV-1a, 32-bit (Fowler–Noll–Vo; offset basis 2166136261, prime 16777619), over UTF-16 code units. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

type CallBody = { ok: true; name: string; arguments: string } | { ok: false; error: string };

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function parseCallBody(raw: string): CallBody {
  if (raw.trim() === '') return { ok: false, error: 'empty <tool_call> block' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (cause) {
    return { ok: false, error: `invalid JSON (${errorMessage(cause)})` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {
      ok: false,
      error: `expected a JSON object {"name": …, "arguments": {…}}, got ${describe(parsed)}`,
    };
  }
  const call = parsed as Record<string, unknown>;
  if (!('name' in call)) return { ok: false, error: 'missing "name"' };
  if (typeof call.name !== 'string' || call.name.trim() === '') {
    return { ok: false, error: `"name" must be a non-empty string, got ${describe(call.name)}` };
  }
  let args = call.arguments;
  // Some models double-encode: accept a string that holds a JSON object.
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return { ok: false, error: '"arguments" is a string that is not JSON; expected a JSON object' };
    }
  }
  if (args === undefined) args = {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return { ok: false, error: `"arguments" must be a JSON object, got ${describe(args)}` };
  }
  return { ok: true, name: call.name, arguments: JSON.stringify(args) };
}

/** Like parseAssistantOutput, with the content left untrimmed (what streaming compares against). */
function parseUntrimmed(text: string, idSalt: string) {
  const content: string[] = [];
  const toolCalls: ToolCall[] = [];
  const errors: string[] = [];
  let cursor = 0;
  let block = 0;
  while (cursor < text.length) {
    const open = text.indexOf(openTag, cursor);
    const strayClose = text.indexOf(closeTag, cursor);
    if (strayClose !== -1 && (open === -1 || strayClose < open)) {
      errors.push(`</tool_call> at character ${strayClose} closes no <tool_call>`);
      content.push(text.slice(cursor, strayClose + closeTag.length));
      cursor = strayClose + closeTag.length;
      continue;
    }
    if (open === -1) {
      content.push(text.slice(cursor));
      break;
    }
    content.push(text.slice(cursor, open));
    block++;
    const bodyStart = open + openTag.length;
    const close = text.indexOf(closeTag, bodyStart);
    const reopen = text.indexOf(openTag, bodyStart);
    if (close === -1 || (reopen !== -1 && reopen < close)) {
      const end = reopen === -1 ? text.length : reopen;
      errors.push(`tool call ${block}: <tool_call> at character ${open} is never closed with </tool_call>`);
      content.push(text.slice(open, end));
      cursor = end;
      continue;
    }
    const end = close + closeTag.length;
    const body = parseCallBody(text.slice(bodyStart, close));
    if (body.ok) {
      // The id hashes everything up to the call's end: the same output always gets the same ids
      // (re-parsing a stored completion, replays, idempotent writes), ids stay fixed while a stream
      // grows, and calls of different turns differ without randomness or async crypto.
      const id = `call_${toolCalls.length}_${fnv1a(`${idSalt}\u0000${text.slice(0, end)}`)}`;
      toolCalls.push({ id, type: 'function', function: { name: body.name, arguments: body.arguments } });
    } else {
      errors.push(`tool call ${block}: ${body.error}`);
      content.push(text.slice(open, end));
    }
    cursor = end;
  }
  return { content: content.join(''), toolCalls, errors };
}

/** Splits assistant output into content and tool calls; see the file header for the error policy. */
export function parseAssistantOutput(text: string, options: ParseOptions = {}): ParsedAssistantOutput {
  const parsed = parseUntrimmed(text, options.idSalt ?? '');
  const content = parsed.content.trim();
  return { content: content === '' ? null : content, toolCalls: parsed.toolCalls, errors: parsed.errors };
}

export interface ToolCallStreamState {
  /** The text so far ends inside a `<tool_call>` that has no `</tool_call>` yet. */
  insideToolCall: boolean;
  /**
   * Content that is final whatever comes next (untrimmed): text outside calls, without an open call
   * or a trailing fragment of `<tool_call>`. It only grows as text is appended, so a stream can send
   * the difference from the previous value as the next content delta.
   */
  streamableContent: string;
  /** Calls complete so far, with the ids the full parse will give them. */
  toolCalls: ToolCall[];
}

export interface StreamStateOptions extends ParseOptions {
  /**
   * The text is the whole output (the stream is ending): an unclosed `<tool_call>` or a trailing
   * fragment of the tag is final content, as the full parse has it, instead of being held back.
   */
  readonly complete?: boolean;
}

/** Where a streamed assistant output stands: for SSE, which text is content and which calls are done. */
export function toolCallStreamState(text: string, options: StreamStateOptions = {}): ToolCallStreamState {
  let cut = text.length;
  const lastOpen = text.lastIndexOf(openTag);
  const insideToolCall = lastOpen !== -1 && text.indexOf(closeTag, lastOpen) === -1;
  if (options.complete) {
    // Nothing more will come: keep everything.
  } else if (insideToolCall) cut = lastOpen;
  else {
    for (let k = Math.min(openTag.length - 1, text.length); k > 0; k--) {
      if (text.endsWith(openTag.slice(0, k))) {
        cut = text.length - k;
        break;
      }
    }
  }
  const parsed = parseUntrimmed(text.slice(0, cut), options.idSalt ?? '');
  return { insideToolCall, streamableContent: parsed.content, toolCalls: parsed.toolCalls };
}
