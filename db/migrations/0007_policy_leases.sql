CREATE TABLE "policy_leases" (
	"policy_id" uuid PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"taken_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "training_runs" DROP CONSTRAINT "training_runs_status_check";--> statement-breakpoint
ALTER TABLE "policy_leases" ADD CONSTRAINT "policy_leases_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "training_runs" ADD CONSTRAINT "training_runs_status_check" CHECK ("training_runs"."status" in ('running', 'finished', 'failed', 'interrupted'));