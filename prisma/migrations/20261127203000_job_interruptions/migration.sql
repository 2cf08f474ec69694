-- Runs the platform ended that use none of a job's attempts: until now only preemptions were
-- excused, so a job's past preemptions are its past interruptions.
ALTER TABLE "jobs" ADD COLUMN "interruptions" INTEGER NOT NULL DEFAULT 0;
UPDATE "jobs" SET "interruptions" = "preemptions";
