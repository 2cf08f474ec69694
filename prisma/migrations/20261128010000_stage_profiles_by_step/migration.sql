-- The round reads each job's profiles of its last steps only (scheduler/rounds/read-snapshot.ts):
-- a range of (job, step), instead of every row of the job.
CREATE INDEX "stage_profiles_job_id_step_idx" ON "stage_profiles"("job_id", "step");
