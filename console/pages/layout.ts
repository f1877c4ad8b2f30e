// The page shell every console page shares: head (viewport, styles), the navigation, and the two
// scripts (uPlot, then the console's own), all from the console's own assets: no network.
import { type Html, html } from '../html.ts';
import type { ConsoleLinks } from '../links.ts';

export interface PageContext {
  readonly links: ConsoleLinks;
  /** The session's CSRF token, for forms that change state; absent in a static export. */
  readonly csrf?: string;
  /** Whether to offer "sign out" (a console behind API keys). */
  readonly signOut?: boolean;
}

export const sections = ['runs', 'groups', 'policies', 'experiments'] as const;
export type Section = (typeof sections)[number];

const sectionTitles = {
  runs: 'Runs',
  groups: 'Groups',
  policies: 'Policies',
  experiments: 'Experiments',
} satisfies Record<Section, string>;

export function layout(
  context: PageContext,
  page: { readonly title: string; readonly section?: Section; readonly body: Html },
): Html {
  const { links } = context;
  const target = {
    runs: links.runs(),
    groups: links.groups(),
    policies: links.policies(),
    experiments: links.experiments(),
  } satisfies Record<Section, string>;
  const signOut =
    context.signOut && links.signOut && context.csrf
      ? html`<form method="post" action="${links.signOut()}"><input type="hidden" name="csrf" value="${context.csrf}"><button type="submit">Sign out</button></form>`
      : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${page.title} · edgerl console</title>
<link rel="stylesheet" href="${links.asset('uplot.css')}">
<link rel="stylesheet" href="${links.asset('console.css')}">
<script src="${links.asset('uplot.js')}" defer></script>
<script src="${links.asset('console.js')}" defer></script>
</head>
<body>
<header class="top">
<a class="brand" href="${links.runs()}">edgerl console</a>
<nav>${sections.map(
    (section) =>
      html`<a href="${target[section]}"${section === page.section ? html` class="active" aria-current="page"` : ''}>${sectionTitles[section]}</a>`,
  )}</nav>
${links.mode === 'export' ? html`<span class="muted">static export</span>` : ''}
${signOut}
</header>
<main>
${page.body}
</main>
</body>
</html>
`;
}

/** A status as a coloured badge (the CSS keys colours on the status word). */
export function badge(status: string, extra = ''): Html {
  return html`<span class="badge ${status} ${extra}">${status}</span>`;
}
