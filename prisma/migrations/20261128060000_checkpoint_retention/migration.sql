-- A job's `workflow.keepCheckpoints` retires its older checkpoints (common/jobs/checkpoint-retention.ts):
-- the statement that deletes a record writes its (job, step) here, and the files are deleted after,
-- by whichever API process sweeps first; a crash between the two leaves the row, and the next sweep
-- deletes the files. No foreign key: the files outlive the job's row if need be.
CREATE TABLE "checkpoint_deletions" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkpoint_deletions_pkey" PRIMARY KEY ("id")
);

-- A checkpoint another job starts from (its spec's initialCheckpoint) is never retired: retention
-- asks for it by id, a range of this index rather than every job's spec.
CREATE INDEX "jobs_initial_checkpoint_idx" ON "jobs" ((spec -> 'initialCheckpoint' ->> 'checkpointId'))
  WHERE spec ? 'initialCheckpoint';
