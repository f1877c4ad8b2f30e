// The trajectory store's tables, gathered for drizzle (`drizzle({ schema })`) and drizzle-kit.
export * from './experiment-arms.ts';
export * from './experiments.ts';
export * from './judge-scores.ts';
export * from './policies.ts';
export * from './policy-default-changes.ts';
export * from './policy-leases.ts';
export * from './publications.ts';
export * from './rollout-groups.ts';
export * from './tasks.ts';
export * from './training-steps.ts';
export * from './trajectories.ts';
export * from './turns.ts';
