ALTER TABLE "tasks" DROP CONSTRAINT "tasks_split_check";--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_split_check" CHECK ("tasks"."split" in ('train', 'eval', 'validation'));--> statement-breakpoint

-- Reward by policy version and task split: what each version scored on the tasks of each split
-- (train: the rollouts it served; validation: the episodes that choose which version ships; eval: the
-- A/B comparison), from ended trajectories of rollout groups (a group names its task). The mean is of
-- verifier_reward (the environment's own check, what the demo and `edgerl ab report` call success),
-- over the episodes that have one: an infrastructure error is counted, not scored as a failure.
CREATE VIEW "version_split_rewards" AS
SELECT
  p.name AS policy,
  pv.id AS policy_version_id,
  pv.version,
  pv.adapter_name,
  t.env,
  tk.split,
  count(*)::integer AS trajectory_count,
  count(t.verifier_reward)::integer AS rewarded_count,
  (count(*) FILTER (WHERE t.status = 'error'))::integer AS error_count,
  avg(t.verifier_reward) AS verifier_reward_mean,
  max(t.finished_at) AS last_finished_at
FROM trajectories t
JOIN tasks tk ON tk.id = t.task_id
JOIN policy_versions pv ON pv.id = t.policy_version_id
JOIN policies p ON p.id = pv.policy_id
WHERE t.status <> 'running'
GROUP BY p.name, pv.id, t.env, tk.split;
