CREATE TABLE "policy_default_changes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"policy_id" uuid NOT NULL,
	"action" text NOT NULL,
	"from_version_id" uuid,
	"to_version_id" uuid NOT NULL,
	"experiment_id" uuid,
	"reverts_change_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "policy_default_changes_reverts_unique" UNIQUE("reverts_change_id"),
	CONSTRAINT "policy_default_changes_action_check" CHECK ("policy_default_changes"."action" in ('promote', 'rollback')),
	CONSTRAINT "policy_default_changes_reverts_check" CHECK (("policy_default_changes"."action" = 'rollback') = ("policy_default_changes"."reverts_change_id" is not null))
);
--> statement-breakpoint
ALTER TABLE "experiment_arms" ADD COLUMN "position" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "metric" text DEFAULT 'reward' NOT NULL;--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "min_samples" integer DEFAULT 100 NOT NULL;--> statement-breakpoint
ALTER TABLE "policy_default_changes" ADD CONSTRAINT "policy_default_changes_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_default_changes" ADD CONSTRAINT "policy_default_changes_from_version_id_policy_versions_id_fk" FOREIGN KEY ("from_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_default_changes" ADD CONSTRAINT "policy_default_changes_to_version_id_policy_versions_id_fk" FOREIGN KEY ("to_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_default_changes" ADD CONSTRAINT "policy_default_changes_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_default_changes" ADD CONSTRAINT "policy_default_changes_reverts_change_id_policy_default_changes_id_fk" FOREIGN KEY ("reverts_change_id") REFERENCES "public"."policy_default_changes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "policy_default_changes_policy_idx" ON "policy_default_changes" USING btree ("policy_id","created_at");--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_metric_check" CHECK ("experiments"."metric" in ('reward', 'success'));--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_min_samples_check" CHECK ("experiments"."min_samples" >= 2);