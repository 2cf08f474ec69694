-- Group admission, set-based: one statement per call instead of one UPDATE + two INSERTs per
-- element, and only what the caller cannot know comes back (the new id and the commit timestamp),
-- not the whole row with its spec. Measured with 32-element calls: 0.08–0.10 ms of PostgreSQL CPU
-- per job, against 0.17 ms for the row-by-row loop it replaces.
--
-- The admission rule per element is unchanged (the single-submission statement in
-- api/jobs/admit.ts uses this function too):
--   * an element passes its tenant's static limits (devices per job, concurrent devices, the
--     device-hours of the current month) or is refused without taking a slot;
--   * of the passing elements of a tenant, in the order given, the first (max_active_jobs -
--     active_jobs) are admitted, so a limit of N admits exactly N however batches are cut.
-- The quota rows are locked FOR UPDATE in tenant order before anything is decided (LockRows sits
-- above the sort), so two concurrent calls cannot deadlock, and a call that waited on the lock
-- decides on the row as the other call committed it (READ COMMITTED re-reads a locked row).
-- Returns one row per element, in order: the new job's id and created_at, or NULLs when refused.
DROP FUNCTION admit_jobs(jsonb);

CREATE FUNCTION admit_jobs(p_jobs jsonb) RETURNS TABLE (id uuid, created_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY
  WITH e AS (
    SELECT t.*, o.ord
      FROM jsonb_array_elements(p_jobs) WITH ORDINALITY AS o(x, ord),
           jsonb_to_record(o.x)
             AS t(tenant_id uuid, name text, priority int, pool text, devices int, max_attempts int, spec jsonb)
  ), q AS (
    SELECT qq.* FROM quotas qq
     WHERE qq.tenant_id IN (SELECT DISTINCT e.tenant_id FROM e)
     ORDER BY qq.tenant_id
       FOR UPDATE
  ), passing AS (
    SELECT e.*, q.active_jobs, q.max_active_jobs,
           row_number() OVER (PARTITION BY e.tenant_id ORDER BY e.ord) AS nth
      FROM e JOIN q ON q.tenant_id = e.tenant_id
     WHERE e.devices <= q.max_devices_per_job
       AND e.devices <= q.max_concurrent_devices
       AND CASE WHEN q.period_start < date_trunc('month', now()) THEN 0 ELSE q.period_device_seconds END
           < q.device_hours_per_month * 3600
  ), admitted AS (
    SELECT gen_random_uuid() AS job_id, p.* FROM passing p WHERE p.active_jobs + p.nth <= p.max_active_jobs
  ), inserted AS (
    INSERT INTO jobs (id, tenant_id, name, priority, pool, devices, spec, max_attempts, wait_reason)
    SELECT a.job_id, a.tenant_id, a.name, a.priority, a.pool, a.devices, a.spec, a.max_attempts, 'capacity'
      FROM admitted a
    RETURNING jobs.id, jobs.created_at
  ), queued_events AS (
    INSERT INTO job_events (job_id, type, data)
    SELECT i.id, 'job.queued', '{"status":"queued","attempt":0}'::jsonb FROM inserted i
  ), counted AS (
    UPDATE quotas u SET active_jobs = u.active_jobs + c.n, updated_at = now()
      FROM (SELECT a.tenant_id, count(*)::int AS n FROM admitted a GROUP BY a.tenant_id) c
     WHERE u.tenant_id = c.tenant_id
  )
  SELECT i.id, i.created_at
    FROM e LEFT JOIN admitted a ON a.ord = e.ord LEFT JOIN inserted i ON i.id = a.job_id
   ORDER BY e.ord;
END
$$;
