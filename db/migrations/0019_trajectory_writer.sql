ALTER TABLE "trajectories" ADD COLUMN "writer" text DEFAULT 'client' NOT NULL;--> statement-breakpoint
ALTER TABLE "trajectories" ADD COLUMN "key_digest" text;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "writer" text;--> statement-breakpoint
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_writer_check" CHECK ("trajectories"."writer" in ('runner', 'client', 'ingest'));--> statement-breakpoint
ALTER TABLE "turns" ADD CONSTRAINT "turns_writer_check" CHECK ("turns"."writer" in ('runner', 'client', 'ingest'));--> statement-breakpoint
-- Rows that already exist get the writer they had in effect: an ingested episode (it has an ingest key)
-- is `ingest`; a rollout slot (a runner claimed it, it waits for one, or it carries the slot metadata
-- edge/rollouts/rollout-metadata.ts writes) is `runner`; the rest stay `client`, without a key digest,
-- so the agents recording into them keep writing with the id alone. Old turns keep a null writer.
UPDATE "trajectories" SET "writer" = CASE
  WHEN "ingest_key" IS NOT NULL THEN 'ingest'
  WHEN "runner" IS NOT NULL OR "lease_expires_at" IS NOT NULL OR ("group_id" IS NOT NULL AND "metadata" ? 'slot') THEN 'runner'
  ELSE 'client'
END;
