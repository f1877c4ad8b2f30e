// The few reads the demo makes of its own store, in plain SQL (what a user can run with `edgerl sql`):
// the demo policy's published versions, the reward of every training step, and row counts.
import type { Store } from '../../db/store.ts';

export interface PublishedVersion {
  readonly id: string;
  readonly version: number;
  readonly adapterName: string;
}

/** Published versions from 1 up: version 0 is the base model the trainer registers with the policy. */
export async function publishedVersions(store: Store, policyName: string): Promise<PublishedVersion[]> {
  const result = await store.sql.query(
    `select v.id, v.version, v.adapter_name from policy_versions v join policies p on p.id = v.policy_id
     where p.name = $1 and v.status = 'published' and v.version >= 1 order by v.version`,
    [policyName],
  );
  return result.rows.map(([id, version, adapterName]) => ({
    id: String(id),
    version: Number(version),
    adapterName: String(adapterName),
  }));
}

export interface StepReward {
  readonly step: number;
  readonly kind: 'sft' | 'rl';
  /** GRPO steps: mean reward of the step's groups; SFT steps: null. */
  readonly reward: number | null;
  readonly loss: number | null;
  readonly tokens: number | null;
}

/** Every recorded step of the policy's training runs, oldest first. */
export async function stepRewards(store: Store, policyName: string): Promise<StepReward[]> {
  const result = await store.sql.query(
    `select s.step, s.metrics, r.config from training_steps s
     join training_runs r on r.id = s.training_run_id join policies p on p.id = r.policy_id
     where p.name = $1 order by s.step, s.created_at`,
    [policyName],
  );
  return result.rows.map(([step, metrics, config]) => {
    const m = (typeof metrics === 'string' ? JSON.parse(metrics) : metrics) as Record<string, unknown>;
    const c = (typeof config === 'string' ? JSON.parse(config) : config) as Record<string, unknown>;
    const num = (key: string) => (typeof m[key] === 'number' ? (m[key] as number) : null);
    return {
      step: Number(step),
      kind: c.mode === 'sft' ? 'sft' : 'rl',
      reward: num('reward/mean'),
      loss: num('loss'),
      tokens: num('tokens'),
    };
  });
}

/** Rows in the tables a user looks at first. */
export async function storeCounts(store: Store): Promise<Record<string, number>> {
  const tables = [
    'rollout_groups',
    'trajectories',
    'turns',
    'training_runs',
    'training_steps',
    'policy_versions',
    'experiments',
    'experiment_arms',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const result = await store.sql.query(`select count(*) from ${table}`);
    counts[table] = Number(result.rows[0]?.[0]);
  }
  return counts;
}
