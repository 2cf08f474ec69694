-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "run_started_at" TIMESTAMPTZ(3);

-- Jobs running across the upgrade: their run started no later than their placement was last touched.
UPDATE "jobs" SET "run_started_at" = coalesce("placed_at", "updated_at") WHERE "status" = 'running';
