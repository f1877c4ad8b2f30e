// The reversible form in which the store keeps text Postgres cannot hold (a NUL, U+0000; a lone UTF-16
// surrogate), so a model's output is stored instead of refused. Pure; leaves the choice of which
// columns a row escapes, and the marker column that says so, to the store (db/store/turn-row.ts).
//
// Why this form: a row is escaped only when one of its strings needs it, and a marker column
// (`text_encoding`) says so, so ordinary rows stay verbatim and readable in plain SQL. In an escaped
// row every string of the covered columns is written with two escapes, JSON's own spelling:
//   `\`  → `\\`        (the escape character itself, so the form is unambiguous)
//   U+0000 and every lone surrogate U+D800–U+DFFF → `\u` + 4 lowercase hex digits (`\u0000`, `\ud800`)
// Nothing else changes, so `select content from turns` still shows the text with `\u0000` where the NUL
// was. Decoding reads `\\` and `\uXXXX` back and refuses any other backslash sequence.
import { stringProblem } from './unstorable-json.ts';

/** How a row's text columns are stored: verbatim, or in the escaped form above. */
export const textEncodings = ['plain', 'escaped'] as const;
export type TextEncoding = (typeof textEncodings)[number];

/** Stored text that is not in the escaped form its row claims (written around the store). */
export class StoredTextError extends Error {
  override readonly name = 'StoredTextError';
  readonly code = 'invalid-stored-text';
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the characters this must find.
const unstorableSource = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
  .source;
const toEscape = new RegExp(`\\\\|${unstorableSource}`, 'g');

export function escapeText(text: string): string {
  return text.replace(toEscape, (found) =>
    found === '\\' ? '\\\\' : `\\u${found.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

const escaped = /\\(\\|u([0-9a-f]{4}))?/g;

export function unescapeText(text: string): string {
  return text.replace(escaped, (found, kind: string | undefined, hex: string | undefined) => {
    if (kind === '\\') return '\\';
    if (hex !== undefined) return String.fromCharCode(Number.parseInt(hex, 16));
    throw new StoredTextError(`stored text has a stray backslash: ${JSON.stringify(found)}`);
  });
}

/** True when some string of `value` (a value or an object key, at any depth) cannot be stored as it is. */
export function needsEscaping(value: unknown): boolean {
  if (typeof value === 'string') return stringProblem(value) !== undefined;
  if (Array.isArray(value)) return value.some(needsEscaping);
  if (isRecord(value)) {
    return Object.entries(value).some(
      ([key, child]) => stringProblem(key) !== undefined || needsEscaping(child),
    );
  }
  return false;
}

/** `value` with every string and object key passed through `map`; other values as they are. */
export function mapStrings<T>(value: T, map: (text: string) => string): T {
  const visit = (node: unknown): unknown => {
    if (typeof node === 'string') return map(node);
    if (Array.isArray(node)) return node.map(visit);
    if (isRecord(node)) {
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [map(key), visit(child)]));
    }
    return node;
  };
  return visit(value) as T;
}

export function escapeValue<T>(value: T): T {
  return mapStrings(value, escapeText);
}

export function unescapeValue<T>(value: T): T {
  return mapStrings(value, unescapeText);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

const unstorable = new RegExp(unstorableSource, 'g');

/**
 * A diagnostic message (an error reason) made storable by spelling each NUL and lone surrogate as
 * `\uXXXX`, backslashes left alone: readable, not reversible. For text that describes a failure,
 * not data a model produced (which is escaped reversibly instead).
 */
export function storableMessage(text: string): string {
  return text.replace(unstorable, (found) => `\\u${found.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
