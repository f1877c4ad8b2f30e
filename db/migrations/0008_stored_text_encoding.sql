ALTER TABLE "trajectories" ADD COLUMN "text_encoding" text DEFAULT 'plain' NOT NULL;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "text_encoding" text DEFAULT 'plain' NOT NULL;--> statement-breakpoint
ALTER TABLE "trajectories" ADD CONSTRAINT "trajectories_text_encoding_check" CHECK ("trajectories"."text_encoding" in ('plain', 'escaped'));--> statement-breakpoint
ALTER TABLE "turns" ADD CONSTRAINT "turns_text_encoding_check" CHECK ("turns"."text_encoding" in ('plain', 'escaped'));