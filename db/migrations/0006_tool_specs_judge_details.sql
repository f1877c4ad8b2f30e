ALTER TABLE "judge_scores" ADD COLUMN "details" jsonb;--> statement-breakpoint
ALTER TABLE "trajectories" ADD COLUMN "tools" jsonb;