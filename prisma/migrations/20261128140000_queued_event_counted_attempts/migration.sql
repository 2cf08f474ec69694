-- Job events that carry a job's `attempt` (every run so far) carry `countedAttempts` beside it: the
-- runs that count toward maxAttempts, as GET /v1/jobs/{id} reports them (common/jobs/transitions.ts
-- writes it on each later job.running and job.queued). A submission's job.queued is written here.
-- Rewrite whatever body admit_jobs has now (other migrations may have redefined it since), and
-- refuse to go on if nothing was replaced.
DO $do$
DECLARE
  def text := pg_get_functiondef('admit_jobs(jsonb)'::regprocedure);
  fixed text := replace(def, '''{"status":"queued","attempt":0}''::jsonb',
                             '''{"status":"queued","attempt":0,"countedAttempts":0}''::jsonb');
BEGIN
  IF fixed = def THEN
    RAISE EXCEPTION 'admit_jobs does not write the job.queued event as expected';
  END IF;
  EXECUTE fixed;
END
$do$;
