// Where the console's pages link to: under the server's mount path (`/console/groups/…`), or between
// the files of a static export (`group-….html`, all in one folder so relative links need no depth).
// An export has no server: its actions, live updates and filters are absent (undefined).
import type { TaskSplit } from '../protocol/statuses.ts';

export type ConsoleAsset = 'uplot.js' | 'uplot.css' | 'console.js' | 'console.css';

export interface GroupFilter {
  readonly status?: string;
  readonly env?: string;
  readonly version?: string;
  readonly min?: string;
  readonly max?: string;
  readonly q?: string;
  readonly offset?: number;
}

export interface ConsoleLinks {
  readonly mode: 'server' | 'export';
  runs(selected?: readonly string[], align?: 'step' | 'first'): string;
  run(id: string): string;
  groups(filter?: GroupFilter): string;
  group(id: string): string;
  trajectory(id: string): string;
  policies(): string;
  experiments(): string;
  experiment(name: string): string;
  compare(a: string, b: string, split?: TaskSplit): string;
  asset(name: ConsoleAsset): string;
  /** Server only: the live poll of a running group. */
  groupLive?(id: string): string;
  /** Server only: the confirmation page (GET) and action (POST) of promoting an arm. */
  promote?(experiment: string, arm: string): string;
  /** Server only: the confirmation page (GET) and action (POST) of rolling a policy's default back. */
  rollback?(policy: string): string;
  signOut?(): string;
}

function query(params: Record<string, string | readonly string[] | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === '') continue;
    if (Array.isArray(value)) for (const item of value) search.append(key, item);
    else search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Links for the console mounted at `base` (no trailing slash), e.g. `/console`. */
export function serverLinks(base: string): ConsoleLinks {
  const at = (path: string) => `${base}${path}`;
  const name = encodeURIComponent;
  return {
    mode: 'server',
    runs: (selected, align) => at(`/${query({ run: selected ?? [], align })}`),
    run: (id) => at(`/runs/${name(id)}`),
    groups: (filter = {}) => at(`/groups${query({ ...filter })}`),
    group: (id) => at(`/groups/${name(id)}`),
    trajectory: (id) => at(`/trajectories/${name(id)}`),
    policies: () => at('/policies'),
    experiments: () => at('/experiments'),
    experiment: (experiment) => at(`/experiments/${name(experiment)}`),
    compare: (a, b, split) => at(`/compare${query({ a, b, split })}`),
    asset: (asset) => at(`/assets/${asset}`),
    groupLive: (id) => at(`/api/groups/${name(id)}/live`),
    promote: (experiment, arm) => at(`/experiments/${name(experiment)}/promote${query({ arm })}`),
    rollback: (policy) => at(`/policies/${name(policy)}/rollback`),
    signOut: () => at('/sign-out'),
  };
}

/** A name as a file name: characters other than letters, digits, `.`, `_` and `-` become `_`. */
function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** File names of a static export, all in one folder (ids are file-safe already; served names have `@`). */
export const exportLinks: ConsoleLinks = {
  mode: 'export',
  runs: () => 'index.html',
  run: (id) => `run-${fileSafe(id)}.html`,
  groups: () => 'groups.html',
  group: (id) => `group-${fileSafe(id)}.html`,
  trajectory: (id) => `trajectory-${fileSafe(id)}.html`,
  policies: () => 'policies.html',
  experiments: () => 'experiments.html',
  experiment: (name) => `experiment-${fileSafe(name)}.html`,
  compare: (a, b, split) => `compare-${fileSafe(a)}-${fileSafe(b)}${split ? `-${split}` : ''}.html`,
  asset: (asset) => `assets/${asset}`,
};
