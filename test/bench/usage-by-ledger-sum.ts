/**
 * The baseline of bench:report: the statement that charged a report's device-seconds until
 * 2026-11-28, verbatim, its bound a sum over the usage ledger (every row of the job since its
 * placement, read by a scan of the whole ledger: it has no index on job_id; PostgreSQL inlined the
 * sum into each of the four columns computed from it). Production keeps that amount on the job's
 * row now (common/jobs/reports.ts `recordUsage`); this copy exists to be measured beside it.
 */
import type pg from 'pg';

export async function recordUsageByLedgerSum(pool: pg.Pool, jobId: string, deviceSeconds: number) {
  await pool.query(
    `WITH j AS (
       SELECT id, tenant_id, coalesce(placed_at, started_at) AS since,
              coalesce(jsonb_array_length(placement->'devices'), devices) AS held
         FROM jobs WHERE id = $1
     ), b0 AS (
       SELECT j.id, j.tenant_id, GREATEST(0, LEAST($2::float8,
                extract(epoch FROM now() - j.since) * j.held
                - coalesce((SELECT sum(u.device_seconds) FROM usage_ledger u
                             WHERE u.job_id = j.id AND u.created_at >= j.since), 0))) AS s
         FROM j WHERE j.since IS NOT NULL
     ), b AS (
       SELECT id, tenant_id, s, s / $2::float8 * $3::float8 AS run, s / $2::float8 * $4::float8 AS sw,
              s / $2::float8 * $5::float8 AS idle
         FROM b0
     ), uj AS (
       UPDATE jobs SET device_seconds = jobs.device_seconds + b.s,
         running_device_seconds = jobs.running_device_seconds + b.run,
         switching_device_seconds = jobs.switching_device_seconds + b.sw,
         idle_device_seconds = jobs.idle_device_seconds + b.idle
         FROM b WHERE jobs.id = b.id AND b.s > 0
     ), q AS (
       UPDATE quotas SET
         period_device_seconds = CASE WHEN period_start < usage_period_start() THEN b.s ELSE period_device_seconds + b.s END,
         period_running_seconds = CASE WHEN period_start < usage_period_start() THEN b.run ELSE period_running_seconds + b.run END,
         period_switching_seconds = CASE WHEN period_start < usage_period_start() THEN b.sw ELSE period_switching_seconds + b.sw END,
         period_idle_seconds = CASE WHEN period_start < usage_period_start() THEN b.idle ELSE period_idle_seconds + b.idle END,
         period_start = usage_period_start()
         FROM b WHERE quotas.tenant_id = b.tenant_id AND b.s > 0
     )
     INSERT INTO usage_ledger (tenant_id, job_id, device_seconds, running_seconds, switching_seconds, idle_seconds, period_start)
     SELECT tenant_id, id, s, run, sw, idle, usage_period_start() FROM b WHERE s > 0
     RETURNING device_seconds`,
    [jobId, deviceSeconds, deviceSeconds, 0, 0],
  );
}
