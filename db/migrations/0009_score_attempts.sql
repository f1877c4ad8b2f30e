ALTER TABLE "rollout_groups" ADD COLUMN "score_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "rollout_groups" ADD COLUMN "last_score_error" text;--> statement-breakpoint
ALTER TABLE "rollout_groups" ADD COLUMN "next_score_at" timestamp with time zone;