-- How far a job got, for its tenant: the newest step its runs reported and when, and the first step
-- the current run reported and when (its pace, startup excluded, gives the estimated finish).
ALTER TABLE "jobs" ADD COLUMN "progress_step" INTEGER,
                   ADD COLUMN "progress_at" TIMESTAMPTZ(3),
                   ADD COLUMN "pace_step" INTEGER,
                   ADD COLUMN "pace_at" TIMESTAMPTZ(3);
UPDATE "jobs" j SET "progress_step" = m.step, "progress_at" = m.at
  FROM (SELECT job_id, max(step) AS step, max(created_at) AS at FROM metrics GROUP BY job_id) m
 WHERE m.job_id = j.id;
