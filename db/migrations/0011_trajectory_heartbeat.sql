ALTER TABLE "trajectories" ADD COLUMN "runner" text;--> statement-breakpoint
ALTER TABLE "trajectories" ADD COLUMN "heartbeat_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trajectories" ADD COLUMN "lease_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "trajectories" ADD COLUMN "resumes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "trajectories_running_lease_idx" ON "trajectories" USING btree ("lease_expires_at") WHERE "trajectories"."status" = 'running';