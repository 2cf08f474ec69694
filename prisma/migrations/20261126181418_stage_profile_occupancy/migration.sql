-- AlterTable
ALTER TABLE "stage_profiles" ADD COLUMN     "occupancy" DOUBLE PRECISION;
