// What an API key may do: a closed list of scopes, each a set of the others it includes. `record`
// records (the proxy, client trajectories, ingest, reading trajectories); `rollout` starts rollouts and
// groups and, as the client that polls their results, records too; `admin` does everything, the
// console's promote, rollback, experiments and SQL included. Leaves out who holds which key (config).

export const apiScopes = ['record', 'rollout', 'admin'] as const;
export type ApiScope = (typeof apiScopes)[number];

/** The scopes each scope includes (itself too): a key's rights are the union over its scopes. */
export const scopeIncludes = {
  record: ['record'],
  // A rollout client reads the trajectories its rollouts and groups produce, and its outside agents
  // record into the groups it opens: without `record` it could not see its own results.
  rollout: ['rollout', 'record'],
  admin: ['admin', 'rollout', 'record'],
} as const satisfies Record<ApiScope, readonly ApiScope[]>;

/** Keys by the scope they were configured under; a key under two scopes holds both. */
export type ScopedKeys = Readonly<Record<ApiScope, readonly string[]>>;

/** Whether a key holding `held` may do what needs `needed`. */
export function allowsScope(held: readonly ApiScope[], needed: ApiScope): boolean {
  return held.some((scope) => (scopeIncludes[scope] as readonly ApiScope[]).includes(needed));
}
