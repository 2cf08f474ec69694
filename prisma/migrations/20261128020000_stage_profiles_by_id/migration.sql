-- The leader reads only the profiles written since its last round (scheduler/rounds/profile-cache.ts):
-- a range of (job, id). The (job, stage) index served no query; (job, id) and (job, step) serve the
-- cascade from jobs.
DROP INDEX "stage_profiles_job_id_stage_idx";
CREATE INDEX "stage_profiles_job_id_id_idx" ON "stage_profiles"("job_id", "id");
