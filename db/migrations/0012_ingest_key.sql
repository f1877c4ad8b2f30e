ALTER TABLE "trajectories" ADD COLUMN "ingest_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "trajectories_ingest_key_idx" ON "trajectories" USING btree ("ingest_key");