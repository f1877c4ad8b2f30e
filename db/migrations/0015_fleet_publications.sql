CREATE TABLE "publications" (
	"policy_version_id" uuid NOT NULL,
	"replica" text NOT NULL,
	"state" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"ready_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "publications_pkey" PRIMARY KEY("policy_version_id","replica"),
	CONSTRAINT "publications_state_check" CHECK ("publications"."state" in ('loading', 'verified', 'ready', 'quarantined'))
);
--> statement-breakpoint
ALTER TABLE "publications" ADD CONSTRAINT "publications_policy_version_id_policy_versions_id_fk" FOREIGN KEY ("policy_version_id") REFERENCES "public"."policy_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "publications_replica_idx" ON "publications" USING btree ("replica");