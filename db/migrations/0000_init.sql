CREATE TABLE "experiment_arms" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"experiment_id" uuid NOT NULL,
	"name" text NOT NULL,
	"policy_version_id" uuid NOT NULL,
	"weight" double precision DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "experiment_arms_experiment_name_unique" UNIQUE("experiment_id","name"),
	CONSTRAINT "experiment_arms_weight_check" CHECK ("experiment_arms"."weight" >= 0)
);
--> statement-breakpoint
CREATE TABLE "experiments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"policy_id" uuid NOT NULL,
	"description" text,
	"status" text DEFAULT 'running' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"stopped_at" timestamp with time zone,
	CONSTRAINT "experiments_name_unique" UNIQUE("name"),
	CONSTRAINT "experiments_status_check" CHECK ("experiments"."status" in ('running', 'stopped'))
);
--> statement-breakpoint
CREATE TABLE "judge_scores" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"trajectory_id" uuid NOT NULL,
	"judge_model" text NOT NULL,
	"rubric_hash" text NOT NULL,
	"score" double precision NOT NULL,
	"explanation" text,
	"prompt_tokens" integer,
	"completion_tokens" integer,
	"cost_usd" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"base_model" text NOT NULL,
	"description" text,
	"default_version_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "policies_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "policy_versions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"policy_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"adapter_name" text NOT NULL,
	"adapter_uri" text,
	"parent_version_id" uuid,
	"training_run_id" uuid,
	"status" text DEFAULT 'training' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp with time zone,
	"retired_at" timestamp with time zone,
	CONSTRAINT "policy_versions_adapter_name_unique" UNIQUE("adapter_name"),
	CONSTRAINT "policy_versions_policy_version_unique" UNIQUE("policy_id","version"),
	CONSTRAINT "policy_versions_policy_id_id_unique" UNIQUE("policy_id","id"),
	CONSTRAINT "policy_versions_status_check" CHECK ("policy_versions"."status" in ('training', 'published', 'retired'))
);
--> statement-breakpoint
CREATE TABLE "training_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"policy_id" uuid NOT NULL,
	"base_version_id" uuid,
	"status" text DEFAULT 'running' NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error_reason" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "training_runs_status_check" CHECK ("training_runs"."status" in ('running', 'finished', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "rollout_groups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"task_id" uuid NOT NULL,
	"size" integer NOT NULL,
	"policy_version_id" uuid,
	"experiment_id" uuid,
	"status" text DEFAULT 'running' NOT NULL,
	"status_reason" text,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"training_run_id" uuid,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"scored_at" timestamp with time zone,
	"trained_at" timestamp with time zone,
	CONSTRAINT "rollout_groups_status_check" CHECK ("rollout_groups"."status" in ('running', 'complete', 'scored', 'unscored', 'trained', 'failed')),
	CONSTRAINT "rollout_groups_size_check" CHECK ("rollout_groups"."size" > 0)
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"env" text NOT NULL,
	"key" text NOT NULL,
	"input" jsonb NOT NULL,
	"split" text DEFAULT 'train' NOT NULL,
	"seed" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tasks_env_key_unique" UNIQUE("env","key"),
	CONSTRAINT "tasks_split_check" CHECK ("tasks"."split" in ('train', 'eval'))
);
--> statement-breakpoint
CREATE TABLE "training_steps" (
	"training_run_id" uuid NOT NULL,
	"step" integer NOT NULL,
	"metrics" jsonb NOT NULL,
	"group_ids" uuid[] DEFAULT '{}' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "training_steps_pkey" PRIMARY KEY("training_run_id","step")
);
--> statement-breakpoint
CREATE TABLE "trajectories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"group_id" uuid,
	"env" text NOT NULL,
	"task_id" uuid,
	"policy_version_id" uuid,
	"experiment_arm_id" uuid,
	"stickiness_key" text,
	"status" text DEFAULT 'running' NOT NULL,
	"verifier_reward" double precision,
	"judge_score" double precision,
	"final_reward" double precision,
	"turn_count" integer DEFAULT 0 NOT NULL,
	"prompt_token_count" integer DEFAULT 0 NOT NULL,
	"completion_token_count" integer DEFAULT 0 NOT NULL,
	"latency_ms" double precision DEFAULT 0 NOT NULL,
	"error_reason" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "trajectories_status_check" CHECK ("trajectories"."status" in ('running', 'finished', 'truncated', 'error'))
);
--> statement-breakpoint
CREATE TABLE "turns" (
	"trajectory_id" uuid NOT NULL,
	"index" integer NOT NULL,
	"schema_version" integer NOT NULL,
	"role" text NOT NULL,
	"content" text,
	"tool_calls" jsonb,
	"tool_call_id" text,
	"tool_error" text,
	"completion_token_ids" integer[],
	"completion_logprobs" double precision[],
	"prompt_token_count" integer,
	"served_by" text,
	"latency_ms" double precision,
	"metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "turns_pkey" PRIMARY KEY("trajectory_id","index"),
	CONSTRAINT "turns_role_check" CHECK ("turns"."role" in ('system', 'user', 'assistant', 'tool')),
	CONSTRAINT "turns_index_check" CHECK ("turns"."index" >= 0)
);
--> statement-breakpoint
ALTER TABLE "experiment_arms" ADD CONSTRAINT "experiment_arms_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiment_arms" ADD CONSTRAINT "experiment_arms_policy_version_id_policy_versions_id_fk" FOREIGN KEY ("policy_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "judge_scores" ADD CONSTRAINT "judge_scores_trajectory_id_trajectories_id_fk" FOREIGN KEY ("trajectory_id") REFERENCES "public"."trajectories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_default_version_fk" FOREIGN KEY ("id","default_version_id") REFERENCES "public"."policy_versions"("policy_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_parent_version_id_policy_versions_id_fk" FOREIGN KEY ("parent_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_training_run_id_training_runs_id_fk" FOREIGN KEY ("training_run_id") REFERENCES "public"."training_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "training_runs" ADD CONSTRAINT "training_runs_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "training_runs" ADD CONSTRAINT "training_runs_base_version_id_policy_versions_id_fk" FOREIGN KEY ("base_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_groups" ADD CONSTRAINT "rollout_groups_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_groups" ADD CONSTRAINT "rollout_groups_policy_version_id_policy_versions_id_fk" FOREIGN KEY ("policy_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_groups" ADD CONSTRAINT "rollout_groups_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_groups" ADD CONSTRAINT "rollout_groups_training_run_id_training_runs_id_fk" FOREIGN KEY ("training_run_id") REFERENCES "public"."training_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "training_steps" ADD CONSTRAINT "training_steps_training_run_id_training_runs_id_fk" FOREIGN KEY ("training_run_id") REFERENCES "public"."training_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_group_id_rollout_groups_id_fk" FOREIGN KEY ("group_id") REFERENCES "public"."rollout_groups"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_policy_version_id_policy_versions_id_fk" FOREIGN KEY ("policy_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_experiment_arm_id_experiment_arms_id_fk" FOREIGN KEY ("experiment_arm_id") REFERENCES "public"."experiment_arms"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "turns" ADD CONSTRAINT "turns_trajectory_id_trajectories_id_fk" FOREIGN KEY ("trajectory_id") REFERENCES "public"."trajectories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "judge_scores_trajectory_idx" ON "judge_scores" USING btree ("trajectory_id");--> statement-breakpoint
CREATE INDEX "training_runs_policy_idx" ON "training_runs" USING btree ("policy_id");--> statement-breakpoint
CREATE INDEX "rollout_groups_status_created_idx" ON "rollout_groups" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "rollout_groups_task_idx" ON "rollout_groups" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "tasks_env_split_idx" ON "tasks" USING btree ("env","split");--> statement-breakpoint
CREATE INDEX "trajectories_group_idx" ON "trajectories" USING btree ("group_id");--> statement-breakpoint
CREATE INDEX "trajectories_arm_idx" ON "trajectories" USING btree ("experiment_arm_id");--> statement-breakpoint
CREATE INDEX "trajectories_started_idx" ON "trajectories" USING btree ("started_at");