// The groups list's data: the filter as the query string gave it (bad values named, not thrown),
// the matching groups, and what the filter menus offer.
import { isUuidLike } from '../../protocol/is-uuid-like.ts';
import { type GroupStatus, groupStatuses } from '../../protocol/statuses.ts';
import type { GroupFilterOptions, GroupListing, SearchGroupsInput, Store } from '../../db/store.ts';
import type { GroupFilter } from '../links.ts';

export interface GroupsView {
  readonly filter: GroupFilter;
  readonly problems: string[];
  readonly listings: GroupListing[];
  readonly options: GroupFilterOptions;
  readonly pageSize: number;
}

export const groupsPageSize = 50;

export function parseGroupFilter(query: Record<string, string | undefined>): {
  readonly filter: GroupFilter;
  readonly input: SearchGroupsInput;
  readonly problems: string[];
} {
  const problems: string[] = [];
  const text = (key: string) => {
    const value = query[key]?.trim();
    return value ? value : undefined;
  };
  const reward = (key: 'min' | 'max') => {
    const value = text(key);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) {
      problems.push(`${key} reward "${value}" is not a number; ignored`);
      return undefined;
    }
    return parsed;
  };
  const status = text('status');
  const knownStatus = groupStatuses.find((candidate): candidate is GroupStatus => candidate === status);
  if (status && !knownStatus)
    problems.push(`status "${status}" is not one of ${groupStatuses.join(', ')}; ignored`);
  const version = text('version');
  if (version && !isUuidLike(version)) problems.push(`version "${version}" is not a version id; ignored`);
  const offsetText = text('offset');
  const offset = offsetText && /^\d{1,7}$/.test(offsetText) ? Number(offsetText) : 0;
  let min = reward('min');
  let max = reward('max');
  if (min !== undefined && max !== undefined && min > max) {
    problems.push(`min reward ${min} is above max reward ${max}; both ignored`);
    min = undefined;
    max = undefined;
  }
  const q = text('q')?.slice(0, 200);
  const env = text('env')?.slice(0, 200);
  const filter: GroupFilter = {
    ...(knownStatus ? { status: knownStatus } : {}),
    ...(env ? { env } : {}),
    ...(version && isUuidLike(version) ? { version } : {}),
    ...(min !== undefined ? { min: String(min) } : {}),
    ...(max !== undefined ? { max: String(max) } : {}),
    ...(q ? { q } : {}),
    ...(offset > 0 ? { offset } : {}),
  };
  const input: SearchGroupsInput = {
    ...(knownStatus ? { status: [knownStatus] } : {}),
    ...(env ? { env } : {}),
    ...(filter.version ? { policyVersionId: filter.version } : {}),
    ...(min !== undefined ? { minReward: min } : {}),
    ...(max !== undefined ? { maxReward: max } : {}),
    ...(q ? { text: q } : {}),
    limit: groupsPageSize + 1,
    offset,
  };
  return { filter, input, problems };
}

export async function loadGroups(
  store: Store,
  query: Record<string, string | undefined>,
): Promise<GroupsView> {
  const { filter, input, problems } = parseGroupFilter(query);
  const [listings, options] = await Promise.all([store.searchGroups(input), store.groupFilterOptions()]);
  return { filter, problems, listings, options, pageSize: groupsPageSize };
}
