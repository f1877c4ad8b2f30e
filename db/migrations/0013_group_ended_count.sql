ALTER TABLE "rollout_groups" ADD COLUMN "ended_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Groups that already exist count the slots that have already ended, so the finish that ends their
-- last slot completes them as it does for new groups.
UPDATE "rollout_groups" SET "ended_count" = (
  SELECT count(*) FROM "trajectories"
  WHERE "trajectories"."group_id" = "rollout_groups"."id" AND "trajectories"."status" <> 'running'
);
