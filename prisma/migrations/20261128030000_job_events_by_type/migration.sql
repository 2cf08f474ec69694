-- Each round reads the latest event of a few types for every running or preempted job (re-planning
-- decisions, fitted predictions, notices; scheduler/rounds/read-snapshot.ts): a range of
-- (job, type, id) instead of every event the job ever wrote.
CREATE INDEX "job_events_job_id_type_id_idx" ON "job_events"("job_id", "type", "id");
