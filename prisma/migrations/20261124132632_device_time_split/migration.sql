-- Device-seconds by state: running (engine computing), switching (onload/offload), idle (held, neither).
-- AlterTable
ALTER TABLE "quotas" ADD COLUMN     "period_idle_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "period_running_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "period_switching_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "idle_device_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "running_device_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "switching_device_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "usage_ledger" ADD COLUMN     "idle_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "running_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "switching_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0;
