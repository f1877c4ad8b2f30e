ALTER TABLE "rollout_groups" ADD COLUMN "ingest_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "rollout_groups_ingest_key_idx" ON "rollout_groups" USING btree ("ingest_key");