/** GET /v1/usage: what a tenant has used this period and what its quota leaves. */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { notFound } from '../../common/errors.js';
import { requireRole, tenantOf } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { usageSchema } from '../http/schemas.js';
import type { ApiDeps } from '../deps.js';
import { readShares } from '../jobs/queue-view.js';

export function usageRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  registerRoute(registry, {
    method: 'get',
    path: '/v1/usage',
    operationId: 'getUsage',
    description:
      'Device-seconds this calendar month (UTC), job counts, what the quota leaves, and the share of each pool from the last scheduling round.',
    summary:
      'Device-seconds used this month, active/queued/running jobs, remaining quota, share of each pool',
    tags: ['usage'],
    errors: ['not_found'],
    responses: { 200: json(usageSchema) },
  });
  r.get('/v1/usage', requireRole('tenant'), async (req, res) => {
    const tenantId = tenantOf(req);
    const { rows } = await deps.db.pool.query(
      `SELECT q.*, date_trunc('month', now()) AS current_period,
              CASE WHEN q.period_start < date_trunc('month', now()) THEN 0 ELSE q.period_device_seconds END AS used,
              (SELECT count(*)::int FROM jobs WHERE tenant_id = $1 AND status = 'queued') AS queued,
              (SELECT count(*)::int FROM jobs WHERE tenant_id = $1 AND status = 'running') AS running
         FROM quotas q WHERE q.tenant_id = $1`,
      [tenantId],
    );
    const q = rows[0];
    if (!q) throw notFound('tenant');
    const usedHours = q.used / 3600;
    res.json({
      tenantId,
      periodStart: (q.current_period as Date).toISOString(),
      deviceSecondsUsed: q.used,
      deviceHoursUsed: usedHours,
      activeJobs: q.active_jobs,
      queuedJobs: q.queued,
      runningJobs: q.running,
      quota: {
        maxActiveJobs: q.max_active_jobs,
        maxConcurrentDevices: q.max_concurrent_devices,
        maxDevicesPerJob: q.max_devices_per_job,
        deviceHoursPerMonth: q.device_hours_per_month,
      },
      remaining: {
        activeJobs: Math.max(q.max_active_jobs - q.active_jobs, 0),
        deviceHours: Math.max(q.device_hours_per_month - usedHours, 0),
      },
      shares: await readShares(deps.redis, deps.names, tenantId),
    });
  });
  return r;
}
