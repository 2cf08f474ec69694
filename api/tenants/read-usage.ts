/**
 * A tenant's quota and this month's use, read in one statement: a period that ended reads as zero
 * used (the counters are reset lazily, by the first charge of the new month). Device-seconds come
 * split by state (running, switching, idle-held; common/node-protocol/device-time.ts), for the
 * tenant this period and for each job that ran in it.
 */
import type pg from 'pg';
import type { DeviceTime } from '../../common/node-protocol/device-time.js';

/** Jobs listed per usage read: the ones with the most device-seconds. */
const MAX_JOBS = 100;

export interface JobUsage {
  jobId: string;
  name: string;
  status: string;
  deviceSeconds: number;
  deviceSecondsByState: DeviceTime;
}

export interface UsageRow {
  periodStart: Date;
  deviceSecondsUsed: number;
  deviceSecondsByState: DeviceTime;
  /** The tenant's jobs that ran this period (lifetime device-seconds), most first, at most MAX_JOBS. */
  jobs: JobUsage[];
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
  const [{ rows }, jobs] = await Promise.all([
    pool.query(
      `SELECT q.*, usage_period_start() AS current_period, q.period_start < usage_period_start() AS ended,
            (SELECT count(*)::int FROM jobs WHERE tenant_id = $1 AND status = 'queued') AS queued,
            (SELECT count(*)::int FROM jobs WHERE tenant_id = $1 AND status = 'running') AS running
       FROM quotas q WHERE q.tenant_id = $1`,
      [tenantId],
    ),
    pool.query(
      `SELECT id, name, status::text AS status, device_seconds, running_device_seconds,
              switching_device_seconds, idle_device_seconds
         FROM jobs
        WHERE tenant_id = $1 AND device_seconds > 0
          AND (finished_at IS NULL OR finished_at >= usage_period_start())
        ORDER BY device_seconds DESC, id LIMIT ${MAX_JOBS}`,
      [tenantId],
    ),
  ]);
  const q = rows[0];
  if (!q) return null;
  const period = (v: number) => (q.ended ? 0 : Number(v));
  return {
    periodStart: q.current_period,
    deviceSecondsUsed: period(q.period_device_seconds),
    deviceSecondsByState: {
      running: period(q.period_running_seconds),
      switching: period(q.period_switching_seconds),
      idle: period(q.period_idle_seconds),
    },
    jobs: jobs.rows.map((j) => ({
      jobId: j.id,
      name: j.name,
      status: j.status,
      deviceSeconds: Number(j.device_seconds),
      deviceSecondsByState: {
        running: Number(j.running_device_seconds),
        switching: Number(j.switching_device_seconds),
        idle: Number(j.idle_device_seconds),
      },
    })),
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
