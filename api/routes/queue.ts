/**
 * The admin view of a pool's queue in the scheduler's order, a page at a time, with each job's
 * tenant position, estimated start and wait reason: Kueue's visibility API plus the ETA it lacks.
 */
import { pendingRows } from '../jobs/pending-rows.js';
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { priorityLevels, priorityName, waitReasons, type PriorityName } from '../../common/job-status.js';
import { poolNameSchema } from '../../common/job-spec.js';
import { notFound } from '../../common/errors.js';
import { requireRole } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { parseOrThrow } from '../http/validate.js';
import { queryInt } from '../http/schemas.js';
import { readPoolQueue } from '../jobs/queue-view.js';
import type { ApiDeps } from '../deps.js';

const query = z.strictObject({
  offset: queryInt(0, 10_000_000).default(0),
  limit: queryInt(1, 1000).default(100),
});
const params = z.object({ name: poolNameSchema });

const pendingSchema = z
  .object({
    jobId: z.uuid(),
    tenantId: z.uuid(),
    tenantName: z.string(),
    name: z.string(),
    priority: z
      .enum(Object.keys(priorityLevels) as [PriorityName])
      .openapi({ description: "The job's priority, as its spec names it" }),
    queuePosition: z.number().int(),
    tenantQueuePosition: z.number().int(),
    estimatedStartAt: z.iso.datetime().nullable(),
    estimatedFinishAt: z.iso.datetime().nullable().openapi({
      description: 'When its run is predicted to end: from its estimated start, its remaining steps',
    }),
    waitReason: z.enum(waitReasons),
    queuedAt: z.iso.datetime(),
  })
  .openapi('PendingJob');

export function queueRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  registerRoute(registry, {
    method: 'get',
    path: '/v1/pools/{name}/queue',
    operationId: 'listPoolQueue',
    description:
      'Pages of `limit` from `offset`, as the last scheduling round ordered them; a pool with nothing queued has an empty page.',
    summary:
      "A pool's pending jobs in the scheduler's order, with positions, estimated starts and wait reasons",
    tags: ['nodes'],
    request: { params, query },
    responses: {
      200: json(
        z.object({ data: z.array(pendingSchema), total: z.number().int(), offset: z.number().int() }),
      ),
    },
  });
  r.get('/v1/pools/:name/queue', requireRole('admin'), async (req, res) => {
    const p = params.safeParse(req.params);
    if (!p.success) throw notFound('pool');
    const q = parseOrThrow(query, req.query);
    const page = await readPoolQueue(deps.redis, deps.names, p.data.name, q.offset, q.limit);
    const ids = page.entries.map((e) => e.jobId);
    const byId = await pendingRows(deps.db.pool, ids);
    res.json({
      total: page.total,
      offset: q.offset,
      data: page.entries
        .filter((e) => byId.has(e.jobId))
        .map((e) => {
          const row = byId.get(e.jobId)!;
          return {
            jobId: e.jobId,
            tenantId: row.tenantId,
            tenantName: row.tenantName,
            name: row.name,
            priority: priorityName(row.priority),
            queuePosition: e.queuePosition,
            tenantQueuePosition: e.tenantQueuePosition,
            estimatedStartAt: e.estimatedStartAt,
            estimatedFinishAt: e.estimatedFinishAt,
            waitReason: e.waitReason,
            queuedAt: row.queuedAt.toISOString(),
          };
        }),
    });
  });
  return r;
}
