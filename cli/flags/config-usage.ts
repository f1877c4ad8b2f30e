// The options part of a command's usage text, generated from its config schemas' field docs and
// defaults: one line per flag (wrapped) under its section's heading, and the variables without a flag. The synopsis and prose are the command's.
import type { ConfigField } from '../../protocol/config-docs.ts';

/** Where the descriptions start, and the width they wrap at. */
const column = 27;
const width = 100;

/** Sections in `order` first, then any others in the order their first field appears. */
export function usageOptions(fields: readonly ConfigField[], order: readonly string[] = []): string {
  const sections = new Map<string, string[]>(order.map((section) => [section, []]));
  for (const field of fields) {
    const { flag, section = 'Options' } = field.doc;
    if (!flag) continue;
    if (!sections.has(section)) sections.set(section, []);
    sections.get(section)?.push(optionLine(field));
  }
  return [...sections]
    .filter(([, lines]) => lines.length > 0)
    .map(([section, lines]) => `${section}:\n${lines.join('\n')}`)
    .join('\n');
}

/** `  --flag ARG   what it means: a | b (or ENV; default X)`. */
export function optionLine({ doc, choices, defaultValue }: ConfigField): string {
  const name = `  --${doc.flag}${doc.arg ? ` ${doc.arg}` : ''}`;
  const takesValue = doc.arg !== undefined;
  const notes = [
    doc.repeatable ? 'repeatable' : undefined,
    doc.env ? `or ${doc.env}` : undefined,
    takesValue ? defaultText(doc.shownDefault, defaultValue) : undefined,
  ].filter((note) => note !== undefined);
  const text = [
    takesValue ? doc.doc : (doc.flagDoc ?? doc.doc),
    takesValue && choices ? `: ${choices.join(' | ')}` : '',
    notes.length > 0 ? ` (${notes.join('; ')})` : '',
  ].join('');
  return wrap(name.length < column ? name.padEnd(column) : `${name} `, text);
}

/** `  NAME   what it means (default X)` for each field read from a variable that has no flag. */
export function usageVariables(fields: readonly ConfigField[]): string {
  return fields
    .filter((field) => field.doc.env !== undefined && field.doc.flag === undefined)
    .map(({ doc, choices, defaultValue }) => {
      const name = `  ${doc.env}`;
      const fallback = defaultText(doc.shownDefault, defaultValue);
      const text = `${doc.doc}${choices ? `: ${choices.join(' | ')}` : ''}${fallback ? ` (${fallback})` : ''}`;
      return wrap(name.length < column ? name.padEnd(column) : `${name} `, text);
    })
    .join('\n');
}

/** How a default reads in the usage text: `5e-6` rather than `0.000005`, lists comma-separated. */
export function formatDefault(value: unknown): string {
  if (typeof value === 'number' && value !== 0 && Math.abs(value) < 1e-3) {
    return value
      .toExponential()
      .replace(/\.?0*e/, 'e')
      .replace('e+', 'e');
  }
  return Array.isArray(value) ? value.join(',') : String(value);
}

function defaultText(shown: string | undefined, value: unknown): string | undefined {
  if (shown !== undefined) return `default ${shown}`;
  if (value === undefined || value === null) return undefined;
  return `default ${formatDefault(value)}`;
}

function wrap(head: string, text: string): string {
  const lines: string[] = [];
  let line = head;
  for (const word of text.split(' ')) {
    if (line.length + word.length > width && line.trim() !== '' && line.length > column) {
      lines.push(line.trimEnd());
      line = ' '.repeat(column);
    }
    line += `${word} `;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}
