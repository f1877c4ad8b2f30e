// The page between a click and a change: what will happen in plain words, any warning the CLI would
// print, and a form that posts the change (with the CSRF token) or goes back. A refusal from the
// store (a version ready on no replica, nothing to roll back) comes back here as an error.
import { type Html, html } from '../html.ts';
import { layout, type PageContext, type Section } from './layout.ts';

export interface Confirmation {
  readonly title: string;
  readonly section: Section;
  readonly lines: readonly Html[];
  readonly warning?: string;
  readonly error?: string;
  /** Where the form posts. */
  readonly action: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly confirmLabel: string;
  readonly cancelHref: string;
  /** False when the change cannot be made: the form is left out. */
  readonly possible: boolean;
}

export function confirmPage(context: PageContext, confirmation: Confirmation): Html {
  const body = html`<h1>${confirmation.title}</h1>
${confirmation.lines.map((line) => html`<p>${line}</p>`)}
${confirmation.warning ? html`<p class="notice warn" role="alert">Note: ${confirmation.warning}. You may go ahead anyway, as with the CLI.</p>` : ''}
${confirmation.error ? html`<p class="notice error" role="alert">${confirmation.error}</p>` : ''}
${
  confirmation.possible && context.csrf !== undefined
    ? html`<form method="post" action="${confirmation.action}" class="confirm">
<input type="hidden" name="csrf" value="${context.csrf}">
${Object.entries(confirmation.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="danger">${confirmation.confirmLabel}</button> <a href="${confirmation.cancelHref}">Cancel</a>
</form>`
    : html`<p><a href="${confirmation.cancelHref}">Back</a></p>`
}`;
  return layout(context, { title: confirmation.title, section: confirmation.section, body });
}
