// Groups: filter by status, environment, sampling version, mean-reward range and text (task key or
// any turn), newest first, each with its reward spread and a link to the side-by-side view.
import { groupStatuses } from '../../protocol/statuses.ts';
import { fixed, shortId, utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { GroupsView } from '../data/load-groups.ts';
import { badge, layout, type PageContext } from './layout.ts';

function option(value: string, label: string, selected: string | undefined): Html {
  return html`<option value="${value}"${value === (selected ?? '') ? html` selected` : ''}>${label}</option>`;
}

export function groupsPage(context: PageContext, view: GroupsView): Html {
  const { links } = context;
  const { filter } = view;
  const shown = view.listings.slice(0, view.pageSize);
  const more = view.listings.length > view.pageSize;
  const offset = filter.offset ?? 0;
  const form =
    links.mode === 'server'
      ? html`<form class="filters" method="get" action="${links.groups()}" role="search">
<label>status <select name="status">${option('', 'any', filter.status)}${groupStatuses.map((status) => option(status, status, filter.status))}</select></label>
<label>environment <select name="env">${option('', 'any', filter.env)}${view.options.envs.map((env) => option(env, env, filter.env))}</select></label>
<label>version <select name="version">${option('', 'any', filter.version)}${view.options.versions.map((version) => option(version.id, version.adapterName, filter.version))}</select></label>
<label>mean reward ≥ <input type="number" step="any" name="min" value="${filter.min ?? ''}" size="5"></label>
<label>≤ <input type="number" step="any" name="max" value="${filter.max ?? ''}" size="5"></label>
<label>text <input type="search" name="q" value="${filter.q ?? ''}" placeholder="task key or any turn"></label>
<button type="submit">Filter</button>
</form>`
      : '';
  const rows = shown.map(
    (listing) => html`<tr data-group="${listing.group.id}">
<td><a href="${links.group(listing.group.id)}">${shortId(listing.group.id)}</a></td>
<td>${badge(listing.group.status)}</td>
<td>${utc(listing.group.createdAt)}</td>
<td>${listing.env}</td>
<td>${listing.taskKey}</td>
<td>${listing.adapterName ?? '–'}</td>
<td class="num">${listing.ended} / ${listing.group.size}</td>
<td class="num">${fixed(listing.meanReward, 3)}</td>
<td class="num">${listing.minReward === null ? '–' : `${fixed(listing.minReward, 2)}–${fixed(listing.maxReward, 2)}`}</td>
<td class="wrap">${listing.group.statusReason ?? listing.group.lastScoreError ?? ''}</td>
</tr>`,
  );
  const body = html`<h1>Groups</h1>
${form}
${view.problems.map((problem) => html`<p class="notice warn">${problem}</p>`)}
${
  shown.length === 0
    ? html`<p>No group matches.</p>`
    : html`<div class="scroll"><table class="groups">
<thead><tr><th>group</th><th>status</th><th>created</th><th>env</th><th>task</th><th>version</th><th class="num">ended</th><th class="num">mean reward</th><th class="num">range</th><th>reason</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
${
  links.mode === 'server' && (more || offset > 0)
    ? html`<p>${offset > 0 ? html`<a href="${links.groups({ ...filter, offset: Math.max(0, offset - view.pageSize) })}">← newer</a> ` : ''}${more ? html`<a href="${links.groups({ ...filter, offset: offset + view.pageSize })}">older →</a>` : ''}</p>`
    : ''
}`;
  return layout(context, { title: 'Groups', section: 'groups', body });
}
