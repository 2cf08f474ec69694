-- AlterTable
ALTER TABLE "nodes" ADD COLUMN     "key_id" UUID;
