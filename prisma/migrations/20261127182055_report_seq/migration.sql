-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "reported_run" INTEGER,
ADD COLUMN     "reported_seq" INTEGER NOT NULL DEFAULT 0;
