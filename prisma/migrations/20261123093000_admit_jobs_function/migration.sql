-- Group admission: one call admits a batch of submissions in one transaction. Each element gets
-- exactly the checks and writes of the single-submission statement (api/jobs/admit.ts): the quota
-- row's UPDATE is the serialisation point, a refused element writes nothing, and elements are
-- admitted in the order given, so a limit of N admits exactly N however the batch is cut.
-- Returns one row per element, in order: the new job, or a row of NULLs when a quota refused it.
-- Callers order elements by tenant so that concurrent batches lock quota rows in the same order.
CREATE FUNCTION admit_jobs(p_jobs jsonb) RETURNS SETOF jobs
LANGUAGE plpgsql AS $$
DECLARE
  x record;
  j jobs;
BEGIN
  FOR x IN
    SELECT * FROM jsonb_to_recordset(p_jobs)
      AS t(tenant_id uuid, name text, priority int, pool text, devices int, max_attempts int, spec jsonb)
  LOOP
    j := NULL;
    UPDATE quotas SET active_jobs = active_jobs + 1, updated_at = now()
     WHERE tenant_id = x.tenant_id
       AND active_jobs < max_active_jobs
       AND x.devices <= max_devices_per_job
       AND x.devices <= max_concurrent_devices
       AND CASE WHEN period_start < date_trunc('month', now()) THEN 0 ELSE period_device_seconds END
           < device_hours_per_month * 3600;
    IF FOUND THEN
      INSERT INTO jobs (tenant_id, name, priority, pool, devices, spec, max_attempts, wait_reason)
      VALUES (x.tenant_id, x.name, x.priority, x.pool, x.devices, x.spec, x.max_attempts, 'capacity')
      RETURNING * INTO j;
      INSERT INTO job_events (job_id, type, data)
      VALUES (j.id, 'job.queued', jsonb_build_object('status', 'queued', 'attempt', 0));
    END IF;
    RETURN NEXT j;
  END LOOP;
END
$$;
