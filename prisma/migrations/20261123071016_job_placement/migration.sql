-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "node_id" UUID,
ADD COLUMN     "placement" JSONB;

-- CreateIndex
CREATE INDEX "jobs_node_id_idx" ON "jobs"("node_id");

-- AddForeignKey
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_node_id_fkey" FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE SET NULL ON UPDATE CASCADE;
