-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "placed_at" TIMESTAMPTZ(3),
ADD COLUMN     "preempt_reason" TEXT,
ADD COLUMN     "preempt_requested_at" TIMESTAMPTZ(3),
ADD COLUMN     "preemptions" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "queued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "sched_epoch" BIGINT;

-- CreateTable
CREATE TABLE "scheduler_leases" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "epoch" BIGINT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "renewed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scheduler_leases_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "tenant_usage" (
    "tenant_id" UUID NOT NULL,
    "pool" TEXT NOT NULL,
    "device_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "memory_byte_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_usage_pkey" PRIMARY KEY ("tenant_id","pool")
);

-- CreateIndex
CREATE INDEX "jobs_status_pool_idx" ON "jobs"("status", "pool");

-- Existing queued jobs entered the queue when they were created.
UPDATE "jobs" SET "queued_at" = "created_at";
