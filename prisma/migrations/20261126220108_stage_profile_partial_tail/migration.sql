-- AlterTable
ALTER TABLE "stage_profiles" ADD COLUMN     "partial_tail" DOUBLE PRECISION;
