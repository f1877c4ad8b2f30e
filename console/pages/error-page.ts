// A console page for a request that failed: the store's message for what the reader can fix (no
// such group, a bad id), a generic line for the rest (the cause goes to the server log, not the page).
import { type Html, html } from '../html.ts';
import { layout, type PageContext } from './layout.ts';

export function errorPage(context: PageContext, status: number, message: string): Html {
  const title =
    status === 404 ? 'Not found' : status === 400 ? 'Bad request' : status === 409 ? 'Refused' : 'Error';
  return layout(context, {
    title,
    body: html`<h1>${title}</h1><p class="notice error">${message}</p><p><a href="${context.links.runs()}">Back to the console</a></p>`,
  });
}
