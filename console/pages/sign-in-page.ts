// The sign-in form: one API key, posted once; the console answers with a session cookie that holds a
// signature of the key, never the key. No navigation: nothing else is reachable signed out.
import { type Html, html } from '../html.ts';
import type { ConsoleLinks } from '../links.ts';

export function signInPage(
  links: ConsoleLinks,
  options: { readonly action: string; readonly next: string; readonly error?: string },
): Html {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Sign in · edgerl console</title>
<link rel="stylesheet" href="${links.asset('console.css')}"></head>
<body><main>
<form class="sign-in" method="post" action="${options.action}">
<h1>edgerl console</h1>
<label for="key">API key (one of the edge's EDGERL_EDGE_API_KEYS)</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<input type="hidden" name="next" value="${options.next}">
${options.error ? html`<p class="notice error" role="alert">${options.error}</p>` : ''}
<button type="submit" class="primary">Sign in</button>
<p class="muted">The browser keeps an HttpOnly session cookie for a week; the key itself is not stored.</p>
</form>
</main></body></html>
`;
}
