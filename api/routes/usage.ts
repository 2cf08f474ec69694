/** GET /v1/usage: what a tenant has used this period and what its quota leaves. */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { notFound } from '../../common/errors.js';
import { requireRole, tenantOf } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { usageSchema } from '../http/schemas.js';
import type { ApiDeps } from '../deps.js';
import { readUsage } from '../tenants/read-usage.js';
import { readShares } from '../jobs/queue-view.js';

export function usageRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  registerRoute(registry, {
    method: 'get',
    path: '/v1/usage',
    operationId: 'getUsage',
    description:
      'Device-seconds this calendar month (UTC), split into running (the engine computing), switching (onload/offload) and idle-held time, for the tenant and for each job that ran this month; job counts, what the quota leaves, and the share of each pool from the last scheduling round.',
    summary:
      'Device-seconds used this month (running, switching, idle-held; per job too), active/queued/running jobs, remaining quota, share of each pool',
    tags: ['usage'],
    errors: ['not_found'],
    responses: { 200: json(usageSchema) },
  });
  r.get('/v1/usage', requireRole('tenant'), async (req, res) => {
    const tenantId = tenantOf(req);
    const u = await readUsage(deps.db.pool, tenantId);
    if (!u) throw notFound('tenant');
    const usedHours = u.deviceSecondsUsed / 3600;
    res.json({
      tenantId,
      periodStart: u.periodStart.toISOString(),
      deviceSecondsUsed: u.deviceSecondsUsed,
      deviceSecondsByState: u.deviceSecondsByState,
      jobs: u.jobs,
      deviceHoursUsed: usedHours,
      activeJobs: u.activeJobs,
      queuedJobs: u.queuedJobs,
      runningJobs: u.runningJobs,
      quota: u.quota,
      remaining: {
        activeJobs: Math.max(u.quota.maxActiveJobs - u.activeJobs, 0),
        deviceHours: Math.max(u.quota.deviceHoursPerMonth - usedHours, 0),
      },
      shares: await readShares(deps.redis, deps.names, tenantId),
    });
  });
  return r;
}
