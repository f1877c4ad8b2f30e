-- Custom SQL migration file, put your code below! --
-- Views that make the usual questions one SELECT away. Reward statistics use final_reward, the reward
-- the trainer used; verifier and judge means are listed beside it.

-- One row per trajectory: its task, the version that served it, its arm, outcome, rewards and sizes.
CREATE VIEW "trajectory_summaries" AS
SELECT
  t.id AS trajectory_id,
  t.group_id,
  t.env,
  tk.key AS task_key,
  tk.split AS task_split,
  p.name AS policy,
  pv.adapter_name,
  e.name AS experiment,
  a.name AS arm,
  t.status,
  t.verifier_reward,
  t.judge_score,
  t.final_reward,
  t.turn_count,
  coalesce(tc.tool_call_count, 0) AS tool_call_count,
  coalesce(tc.tool_error_count, 0) AS tool_error_count,
  t.prompt_token_count,
  t.completion_token_count,
  t.latency_ms,
  t.error_reason,
  t.stickiness_key,
  t.started_at,
  t.finished_at,
  (extract(epoch FROM t.finished_at - t.started_at) * 1000)::double precision AS duration_ms
FROM trajectories t
LEFT JOIN tasks tk ON tk.id = t.task_id
LEFT JOIN policy_versions pv ON pv.id = t.policy_version_id
LEFT JOIN policies p ON p.id = pv.policy_id
LEFT JOIN experiment_arms a ON a.id = t.experiment_arm_id
LEFT JOIN experiments e ON e.id = a.experiment_id
LEFT JOIN LATERAL (
  SELECT
    sum(jsonb_array_length(u.tool_calls))::integer AS tool_call_count,
    (count(*) FILTER (WHERE u.tool_error IS NOT NULL))::integer AS tool_error_count
  FROM turns u
  WHERE u.trajectory_id = t.id
) tc ON true;
--> statement-breakpoint

-- One row per rollout group: progress, and the reward mean/std that GRPO's group baseline uses.
-- GRPO (Shao et al. 2024, DeepSeekMath §4.1.2) normalises each reward by its group's mean and standard
-- deviation; reward_std is the population standard deviation (divide by n), as ART computes it.
CREATE VIEW "group_summaries" AS
SELECT
  g.id AS group_id,
  tk.env,
  tk.key AS task_key,
  pv.adapter_name,
  e.name AS experiment,
  g.status,
  g.status_reason,
  g.size,
  count(t.id)::integer AS trajectory_count,
  (count(t.id) FILTER (WHERE t.status = 'running'))::integer AS running_count,
  (count(t.id) FILTER (WHERE t.status = 'finished'))::integer AS finished_count,
  (count(t.id) FILTER (WHERE t.status = 'truncated'))::integer AS truncated_count,
  (count(t.id) FILTER (WHERE t.status = 'error'))::integer AS error_count,
  count(t.final_reward)::integer AS rewarded_count,
  avg(t.final_reward) AS reward_mean,
  stddev_pop(t.final_reward) AS reward_std,
  min(t.final_reward) AS reward_min,
  max(t.final_reward) AS reward_max,
  avg(t.verifier_reward) AS verifier_reward_mean,
  avg(t.judge_score) AS judge_score_mean,
  stddev_pop(t.judge_score) AS judge_score_std,
  coalesce(sum(t.completion_token_count), 0)::bigint AS completion_token_count,
  g.lease_owner,
  g.lease_expires_at,
  g.created_at,
  g.completed_at,
  g.scored_at,
  g.trained_at
FROM rollout_groups g
JOIN tasks tk ON tk.id = g.task_id
LEFT JOIN policy_versions pv ON pv.id = g.policy_version_id
LEFT JOIN experiments e ON e.id = g.experiment_id
LEFT JOIN trajectories t ON t.group_id = g.id
GROUP BY g.id, tk.id, pv.id, e.id;
--> statement-breakpoint

-- A readable transcript: one line of text per turn (an assistant's tool calls as name(arguments)).
-- Order by trajectory_id, index to read an episode.
CREATE VIEW "turn_log" AS
SELECT
  u.trajectory_id,
  u.index,
  u.role,
  CASE
    WHEN jsonb_typeof(u.tool_calls) = 'array' AND jsonb_array_length(u.tool_calls) > 0 THEN concat_ws(
      ' ',
      nullif(u.content, ''),
      (
        SELECT string_agg((c.call -> 'function' ->> 'name') || '(' || (c.call -> 'function' ->> 'arguments') || ')', ' ' ORDER BY c.ord)
        FROM jsonb_array_elements(u.tool_calls) WITH ORDINALITY AS c(call, ord)
      )
    )
    ELSE u.content
  END AS text,
  u.tool_call_id,
  u.tool_error,
  cardinality(u.completion_token_ids) AS completion_tokens,
  u.prompt_token_count AS prompt_tokens,
  u.served_by,
  u.latency_ms,
  u.created_at
FROM turns u;
--> statement-breakpoint

-- One row per experiment arm: traffic, errors and reward statistics for comparing arms.
-- reward_std is the sample standard deviation (divide by n - 1) and reward_stderr = reward_std / sqrt(n),
-- the standard error of the mean used to compare two arms.
CREATE VIEW "experiment_arm_stats" AS
SELECT
  e.id AS experiment_id,
  e.name AS experiment,
  e.status AS experiment_status,
  a.id AS arm_id,
  a.name AS arm,
  pv.adapter_name,
  a.weight,
  count(t.id)::integer AS trajectory_count,
  (count(t.id) FILTER (WHERE t.status = 'finished'))::integer AS finished_count,
  (count(t.id) FILTER (WHERE t.status = 'error'))::integer AS error_count,
  count(t.final_reward)::integer AS rewarded_count,
  avg(t.final_reward) AS reward_mean,
  stddev_samp(t.final_reward) AS reward_std,
  stddev_samp(t.final_reward) / sqrt(count(t.final_reward)) AS reward_stderr,
  avg(t.verifier_reward) AS verifier_reward_mean,
  avg(t.judge_score) AS judge_score_mean,
  avg(t.turn_count)::double precision AS turn_count_mean,
  avg(t.latency_ms) AS latency_ms_mean
FROM experiments e
JOIN experiment_arms a ON a.experiment_id = e.id
JOIN policy_versions pv ON pv.id = a.policy_version_id
LEFT JOIN trajectories t ON t.experiment_arm_id = a.id
GROUP BY e.id, a.id, pv.id;
