// HTML built from tagged templates: every interpolated value is escaped unless it is already Html,
// so text from the store (model output, tool results, task input) can only ever render as text.
// Leaves out attributes without quotes: templates always quote them ("…"), which escaping covers.

/** Markup that is already safe: built by `html` or explicitly trusted with `raw`. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What a template may interpolate: text (escaped), Html (kept), lists of either (joined), nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** The five characters HTML gives meaning to (and the backtick, for old attribute parsers), as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => entities[c] as string);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

/** Trusts `markup` as it is: only for text this code wrote itself, never for stored data. */
export function raw(markup: string): Html {
  return new Html(markup);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>`, `&` and the two JavaScript line
 * separators become \u escapes, so no stored string can close the block or start a comment.
 */
export function jsonScript(id: string, data: unknown): Html {
  const json = JSON.stringify(data).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return html`<script type="application/json" id="${id}">${raw(json)}</script>`;
}
