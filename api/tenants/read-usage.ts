/**
 * A tenant's quota and this month's use, read in one statement: a period that ended reads as zero
 * used (the counter is reset lazily, by the first charge of the new month).
 */
import type pg from 'pg';

export interface UsageRow {
  periodStart: Date;
  deviceSecondsUsed: number;
  activeJobs: number;
  queuedJobs: number;
  runningJobs: number;
  quota: {
    maxActiveJobs: number;
    maxConcurrentDevices: number;
    maxDevicesPerJob: number;
    deviceHoursPerMonth: number;
  };
}

export async function readUsage(pool: pg.Pool, tenantId: string): Promise<UsageRow | null> {
  const { rows } = await pool.query(
    `SELECT q.*, usage_period_start() AS current_period,
            CASE WHEN q.period_start < usage_period_start() THEN 0 ELSE q.period_device_seconds END AS used,
            (SELECT count(*)::int FROM jobs WHERE tenant_id = $1 AND status = 'queued') AS queued,
            (SELECT count(*)::int FROM jobs WHERE tenant_id = $1 AND status = 'running') AS running
       FROM quotas q WHERE q.tenant_id = $1`,
    [tenantId],
  );
  const q = rows[0];
  if (!q) return null;
  return {
    periodStart: q.current_period,
    deviceSecondsUsed: q.used,
    activeJobs: q.active_jobs,
    queuedJobs: q.queued,
    runningJobs: q.running,
    quota: {
      maxActiveJobs: q.max_active_jobs,
      maxConcurrentDevices: q.max_concurrent_devices,
      maxDevicesPerJob: q.max_devices_per_job,
      deviceHoursPerMonth: q.device_hours_per_month,
    },
  };
}
