-- Custom SQL migration file, put your code below! --
-- Views for the questions users ask about agent behaviour (README, "Querying trajectories in SQL").
-- `reward` below is final_reward (what the trainer used) or, for episodes the trainer never scored
-- (live traffic), verifier_reward: the same reward the A/B report compares. Rates are fractions in
-- [0, 1]; ratios and means are double precision so every driver returns JS numbers.

-- Every ended trajectory, ranked within its policy version worst first: lowest reward first, then
-- those without a reward (errors, mostly), newest first among equals. `transcript` is its turns as
-- turn_log lines, "[index] role: text", one per line. Partitioned by adapter_name (one per version)
-- so a filter on it reaches the ranking instead of ranking every version.
CREATE VIEW "worst_trajectories" AS
SELECT
  r.worst_rank,
  r.trajectory_id,
  r.policy,
  r.adapter_name,
  r.env,
  r.task_key,
  r.experiment,
  r.arm,
  r.status,
  r.reward,
  r.verifier_reward,
  r.judge_score,
  r.turn_count,
  r.error_reason,
  r.finished_at,
  (
    SELECT string_agg(format('[%s] %s: %s', l.index, l.role, coalesce(l.text, '')), E'\n' ORDER BY l.index)
    FROM turn_log l
    WHERE l.trajectory_id = r.trajectory_id
  ) AS transcript
FROM (
  SELECT
    (row_number() OVER (
      PARTITION BY pv.adapter_name
      ORDER BY coalesce(t.final_reward, t.verifier_reward) ASC NULLS LAST, t.finished_at DESC, t.id
    ))::integer AS worst_rank,
    t.id AS trajectory_id,
    p.name AS policy,
    pv.adapter_name,
    t.env,
    tk.key AS task_key,
    e.name AS experiment,
    a.name AS arm,
    t.status,
    coalesce(t.final_reward, t.verifier_reward) AS reward,
    t.verifier_reward,
    t.judge_score,
    t.turn_count,
    t.error_reason,
    t.finished_at
  FROM trajectories t
  LEFT JOIN tasks tk ON tk.id = t.task_id
  LEFT JOIN policy_versions pv ON pv.id = t.policy_version_id
  LEFT JOIN policies p ON p.id = pv.policy_id
  LEFT JOIN experiment_arms a ON a.id = t.experiment_arm_id
  LEFT JOIN experiments e ON e.id = a.experiment_id
  WHERE t.status <> 'running'
) r;
--> statement-breakpoint

-- Reward by policy version and UTC day (of finished_at): ended trajectories, reward mean and sample
-- standard deviation (divide by n - 1), verifier and judge means, error and truncation rates.
CREATE VIEW "reward_by_version_daily" AS
SELECT
  (t.finished_at AT TIME ZONE 'UTC')::date AS day,
  p.name AS policy,
  pv.adapter_name,
  pv.version,
  count(*)::integer AS trajectory_count,
  count(coalesce(t.final_reward, t.verifier_reward))::integer AS rewarded_count,
  avg(coalesce(t.final_reward, t.verifier_reward)) AS reward_mean,
  stddev_samp(coalesce(t.final_reward, t.verifier_reward)) AS reward_std,
  avg(t.verifier_reward) AS verifier_reward_mean,
  avg(t.judge_score) AS judge_score_mean,
  (count(*) FILTER (WHERE t.status = 'error'))::double precision / count(*) AS error_rate,
  (count(*) FILTER (WHERE t.status = 'truncated'))::double precision / count(*) AS truncation_rate
FROM trajectories t
LEFT JOIN policy_versions pv ON pv.id = t.policy_version_id
LEFT JOIN policies p ON p.id = pv.policy_id
WHERE t.status <> 'running'
GROUP BY 1, p.name, pv.id;
--> statement-breakpoint

-- Tool results by environment and tool: every tool turn is one call's result, named by the call with
-- its tool_call_id in the nearest assistant turn before it ('(unknown)' if none). error_codes counts
-- the tool_error codes; truncation_rate is the share of the trajectories calling the tool that were
-- cut off (max turns).
CREATE VIEW "tool_error_rates" AS
WITH results AS (
  SELECT
    t.id AS trajectory_id,
    t.env,
    t.status,
    r.tool_error,
    coalesce(
      (
        SELECT c.call -> 'function' ->> 'name'
        FROM turns a
        CROSS JOIN LATERAL jsonb_array_elements(
          CASE WHEN jsonb_typeof(a.tool_calls) = 'array' THEN a.tool_calls ELSE '[]'::jsonb END
        ) AS c(call)
        WHERE a.trajectory_id = r.trajectory_id
          AND a.role = 'assistant'
          AND a.index < r.index
          AND c.call ->> 'id' = r.tool_call_id
        ORDER BY a.index DESC
        LIMIT 1
      ),
      '(unknown)'
    ) AS tool
  FROM turns r
  JOIN trajectories t ON t.id = r.trajectory_id
  WHERE r.role = 'tool'
),
codes AS (
  SELECT env, tool, jsonb_object_agg(tool_error, n) AS error_codes
  FROM (
    SELECT env, tool, tool_error, count(*)::integer AS n
    FROM results
    WHERE tool_error IS NOT NULL
    GROUP BY env, tool, tool_error
  ) per_code
  GROUP BY env, tool
)
SELECT
  s.env,
  s.tool,
  count(*)::integer AS call_count,
  count(s.tool_error)::integer AS error_count,
  count(s.tool_error)::double precision / count(*) AS error_rate,
  coalesce(c.error_codes, '{}'::jsonb) AS error_codes,
  count(DISTINCT s.trajectory_id)::integer AS trajectory_count,
  (count(DISTINCT s.trajectory_id) FILTER (WHERE s.status = 'truncated'))::integer AS truncated_trajectory_count,
  (count(DISTINCT s.trajectory_id) FILTER (WHERE s.status = 'truncated'))::double precision
    / count(DISTINCT s.trajectory_id) AS truncation_rate
FROM results s
LEFT JOIN codes c ON c.env = s.env AND c.tool = s.tool
GROUP BY s.env, s.tool, c.error_codes;
--> statement-breakpoint

-- Outcomes by environment and policy version: how ended trajectories ended, and their tool results.
CREATE VIEW "env_outcome_rates" AS
SELECT
  t.env,
  p.name AS policy,
  pv.adapter_name,
  count(*)::integer AS trajectory_count,
  (count(*) FILTER (WHERE t.status = 'finished'))::integer AS finished_count,
  (count(*) FILTER (WHERE t.status = 'truncated'))::integer AS truncated_count,
  (count(*) FILTER (WHERE t.status = 'error'))::integer AS error_count,
  (count(*) FILTER (WHERE t.status = 'truncated'))::double precision / count(*) AS truncation_rate,
  (count(*) FILTER (WHERE t.status = 'error'))::double precision / count(*) AS error_rate,
  coalesce(sum(tc.call_count), 0)::integer AS tool_call_count,
  coalesce(sum(tc.error_count), 0)::integer AS tool_error_count,
  sum(tc.error_count)::double precision / nullif(sum(tc.call_count), 0) AS tool_error_rate
FROM trajectories t
LEFT JOIN policy_versions pv ON pv.id = t.policy_version_id
LEFT JOIN policies p ON p.id = pv.policy_id
LEFT JOIN LATERAL (
  SELECT count(*) AS call_count, count(u.tool_error) AS error_count
  FROM turns u
  WHERE u.trajectory_id = t.id AND u.role = 'tool'
) tc ON true
WHERE t.status <> 'running'
GROUP BY t.env, p.name, pv.id;
--> statement-breakpoint

-- The LLM judge against the environment's verifier, per environment, judge model and rubric (scores
-- from different judges or rubrics are never pooled), over trajectories with both: the latest score
-- of each judge and rubric per trajectory. correlation is Pearson's r (Postgres corr()); a verifier
-- reward of at least 0.5 counts as verified, and agreement_rate is the share of pairs where the judge
-- (score >= 0.5) and the verifier agree.
CREATE VIEW "judge_vs_verifier" AS
WITH latest AS (
  SELECT DISTINCT ON (js.trajectory_id, js.judge_model, js.rubric_hash)
    js.trajectory_id,
    js.judge_model,
    js.rubric_hash,
    js.score
  FROM judge_scores js
  ORDER BY js.trajectory_id, js.judge_model, js.rubric_hash, js.created_at DESC, js.id DESC
)
SELECT
  t.env,
  l.judge_model,
  l.rubric_hash,
  count(*)::integer AS pair_count,
  avg(l.score) AS judge_score_mean,
  avg(t.verifier_reward) AS verifier_reward_mean,
  corr(l.score, t.verifier_reward) AS correlation,
  (count(*) FILTER (WHERE t.verifier_reward >= 0.5))::integer AS verified_count,
  avg(l.score) FILTER (WHERE t.verifier_reward >= 0.5) AS judge_score_mean_verified,
  avg(l.score) FILTER (WHERE t.verifier_reward < 0.5) AS judge_score_mean_not_verified,
  (count(*) FILTER (WHERE (l.score >= 0.5) = (t.verifier_reward >= 0.5)))::double precision / count(*)
    AS agreement_rate
FROM latest l
JOIN trajectories t ON t.id = l.trajectory_id
WHERE t.verifier_reward IS NOT NULL
GROUP BY t.env, l.judge_model, l.rubric_hash;
--> statement-breakpoint

-- Tokens by policy version, over all its trajectories (running ones included: their tokens were
-- spent): the policy's prompt and completion tokens (sums over assistant turns), per trajectory, and
-- what judging them cost (judge_scores: each trajectory's share of the judge calls).
CREATE VIEW "token_usage_by_version" AS
WITH usage AS (
  SELECT
    t.policy_version_id,
    count(*)::integer AS trajectory_count,
    sum(t.turn_count)::bigint AS turn_count,
    sum(t.prompt_token_count)::bigint AS prompt_tokens,
    sum(t.completion_token_count)::bigint AS completion_tokens
  FROM trajectories t
  GROUP BY t.policy_version_id
),
judging AS (
  SELECT
    t.policy_version_id,
    count(*)::integer AS judge_score_count,
    sum(js.prompt_tokens)::bigint AS judge_prompt_tokens,
    sum(js.completion_tokens)::bigint AS judge_completion_tokens,
    sum(js.cost_usd) AS judge_cost_usd
  FROM judge_scores js
  JOIN trajectories t ON t.id = js.trajectory_id
  GROUP BY t.policy_version_id
)
SELECT
  p.name AS policy,
  pv.adapter_name,
  pv.version,
  u.trajectory_count,
  u.turn_count,
  u.prompt_tokens,
  u.completion_tokens,
  u.prompt_tokens + u.completion_tokens AS total_tokens,
  u.prompt_tokens::double precision / u.trajectory_count AS prompt_tokens_per_trajectory,
  u.completion_tokens::double precision / u.trajectory_count AS completion_tokens_per_trajectory,
  coalesce(j.judge_score_count, 0) AS judge_score_count,
  coalesce(j.judge_prompt_tokens, 0)::bigint AS judge_prompt_tokens,
  coalesce(j.judge_completion_tokens, 0)::bigint AS judge_completion_tokens,
  j.judge_cost_usd
FROM usage u
LEFT JOIN judging j ON j.policy_version_id IS NOT DISTINCT FROM u.policy_version_id
LEFT JOIN policy_versions pv ON pv.id = u.policy_version_id
LEFT JOIN policies p ON p.id = pv.policy_id;
