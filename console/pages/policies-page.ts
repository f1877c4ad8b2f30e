// Policies: each policy's versions as a lineage tree (parent → child), with the run that trained each,
// its status, the replicas that hold it, the experiments it is an arm of (promote from there), and
// the history of the default version (roll the last promote back from here). Both actions ask for
// confirmation on a page of their own before anything changes.
import type { LineageVersion, PolicyLineage } from '../../db/store.ts';
import { shortId, utc } from '../format.ts';
import { type Html, html } from '../html.ts';
import type { PoliciesView } from '../data/load-policies.ts';
import { badge, layout, type PageContext } from './layout.ts';

function versionLine(
  context: PageContext,
  view: PoliciesView,
  lineage: PolicyLineage,
  version: LineageVersion,
): Html {
  const { links } = context;
  const replicas = view.publications[version.id] ?? [];
  const arms = view.experiments.flatMap((listing) =>
    listing.arms.filter((arm) => arm.adapterName === version.adapterName).map((arm) => ({ listing, arm })),
  );
  const isDefault = lineage.policy.defaultVersionId === version.id;
  return html`<div class="version" data-version="${version.adapterName}">
<b>${version.adapterName}</b> ${badge(version.status)} ${isDefault ? html`<span class="badge default">default</span>` : ''}
${version.trainingRunId ? html`<span>trained by <a href="${links.run(version.trainingRunId)}">run ${shortId(version.trainingRunId)}</a> ${version.trainingRunStatus ? badge(version.trainingRunStatus) : ''}</span>` : html`<span class="muted">no training run</span>`}
<span class="muted">published ${utc(version.publishedAt)}</span>
${
  replicas.length > 0
    ? html`<span class="replicas">replicas: ${replicas.map(
        (row) =>
          html`<span class="badge ${row.state}" title="${row.replica}: ${row.state}, ${row.attempts} attempt(s)${row.lastError ? `; last error: ${row.lastError}` : ''}">${row.replica} ${row.state}</span> `,
      )}</span>`
    : html`<span class="muted">replicas: not published through a fleet</span>`
}
${arms.map(
  ({ listing, arm }) =>
    html`<span>arm <b>${arm.name}</b> of <a href="${links.experiment(listing.experiment.name)}">${listing.experiment.name}</a> ${badge(listing.experiment.status)}${
      links.promote && !isDefault && version.status === 'published'
        ? html` <a class="button" href="${links.promote(listing.experiment.name, arm.name)}">Promote…</a>`
        : ''
    }</span>`,
)}
</div>`;
}

function lineageTree(context: PageContext, view: PoliciesView, lineage: PolicyLineage): Html {
  const known = new Set(lineage.versions.map((version) => version.id));
  const children = new Map<string | null, LineageVersion[]>();
  for (const version of lineage.versions) {
    const parent =
      version.parentVersionId && known.has(version.parentVersionId) ? version.parentVersionId : null;
    children.set(parent, [...(children.get(parent) ?? []), version]);
  }
  const branch = (parent: string | null): Html => {
    const list = children.get(parent) ?? [];
    if (list.length === 0) return html``;
    return html`<ul${parent === null ? html` class="lineage"` : ''}>${list.map(
      (version) => html`<li>${versionLine(context, view, lineage, version)}${branch(version.id)}</li>`,
    )}</ul>`;
  };
  return branch(null);
}

export function policiesPage(context: PageContext, view: PoliciesView, notice?: string): Html {
  const { links } = context;
  const sections = view.lineages.map((lineage) => {
    const current = lineage.versions.find((version) => version.id === lineage.policy.defaultVersionId);
    const undoable = lineage.defaultChanges.some((change) => change.action === 'promote' && !change.undone);
    return html`<section class="policy" data-policy="${lineage.policy.name}">
<h2>${lineage.policy.name} <span class="muted">on ${lineage.policy.baseModel}</span></h2>
<p>Default version: <b class="default-version">${current?.adapterName ?? 'none'}</b>${
      links.rollback && undoable
        ? html` <a class="button" href="${links.rollback(lineage.policy.name)}">Roll back the last promote…</a>`
        : ''
    }</p>
${lineageTree(context, view, lineage)}
${
  lineage.defaultChanges.length > 0
    ? html`<h3>Default version history</h3><div class="scroll"><table><thead><tr><th>when</th><th>action</th><th>from</th><th>to</th><th>experiment</th><th></th></tr></thead><tbody>${lineage.defaultChanges.map(
        (change) =>
          html`<tr><td>${utc(change.createdAt)}</td><td>${change.action}</td><td>${change.fromAdapterName ?? '–'}</td><td>${change.toAdapterName}</td><td>${change.experimentName ?? '–'}</td><td>${change.undone ? 'rolled back' : ''}</td></tr>`,
      )}</tbody></table></div>`
    : ''
}
</section>`;
  });
  const body = html`<h1>Policies</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${view.lineages.length === 0 ? html`<p>No policy yet.</p>` : sections}`;
  return layout(context, { title: 'Policies', section: 'policies', body });
}
