/**
 * GET /v1/pools/{name}/timeline (admin): every device of a pool with its device-lock holds over a
 * window — the picture of time-sharing the dashboard's pool page draws, with which nodes an admin
 * cordoned (since when, why, evicting or not). Per node, the same data is
 * GET /v1/nodes/{id}/timeline; this one adds job and tenant names and counts the handoffs.
 */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { notFound } from '../../common/errors.js';
import { poolNameSchema } from '../../common/job-spec.js';
import { requireRole } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import {
  epochMsQuery,
  nodeCordonSchema,
  timelineAfter,
  timelineNextCursor,
  queryInt,
} from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { readPoolTimeline } from '../jobs/pool-timeline.js';
import type { ApiDeps } from '../deps.js';

const DEFAULT_WINDOW_MS = 15 * 60_000;

const params = z.object({ name: poolNameSchema });
const query = z.strictObject({
  since: epochMsQuery().optional().openapi({
    description: 'Holds that ended at or after this time (ms), and those still open; default: 15 min ago',
  }),
  limit: queryInt(1, 10_000)
    .default(2000)
    .openapi({ description: 'Holds a page lists at most (a grant of several devices is never split)' }),
  after: timelineAfter,
});

const deviceSchema = z
  .object({
    node: z.uuid(),
    nodeName: z.string(),
    nodeStatus: z.string(),
    nodeCordon: nodeCordonSchema.nullable().openapi({
      description:
        "While an admin has the device's node cordoned (POST /v1/nodes/{id}/cordon): since when, why, and " +
        'whether its jobs are being evicted; nothing new is placed on the node meanwhile. Null otherwise',
    }),
    index: z.number().int(),
  })
  .openapi('PoolDevice');
const holdSchema = z
  .object({
    node: z.uuid(),
    device: z.number().int(),
    job: z.string(),
    jobName: z.string().nullable(),
    tenantId: z.uuid().nullable(),
    tenantName: z.string().nullable(),
    stage: z.string(),
    token: z.number().int(),
    start: z.iso.datetime(),
    end: z.iso.datetime().nullable(),
    reason: z.enum(['released', 'lapsed', 'revoked']).nullable(),
  })
  .openapi('PoolHold');
const timelineSchema = z
  .object({
    pool: z.string(),
    since: z.iso.datetime(),
    now: z.iso.datetime(),
    devices: z.array(deviceSchema),
    data: z.array(holdSchema),
    switches: z
      .number()
      .int()
      .openapi({ description: 'Handoffs between two jobs on one device, on this page' }),
    nextCursor: timelineNextCursor,
  })
  .openapi('PoolTimeline');

const iso = (ms: number) => new Date(ms).toISOString();

export function poolTimelineRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  registerRoute(registry, {
    method: 'get',
    path: '/v1/pools/{name}/timeline',
    operationId: 'getPoolTimeline',
    description:
      "Each device of the pool, with its node's status and cordon, and every device-lock hold on them since `since` in the order they were granted, with the job, its tenant and the stage; open holds have no `end`. Pages of `limit`, the next one `after` the `nextCursor`.",
    summary: "A pool's device-lock timeline: who held each device, when, in which stage",
    tags: ['nodes'],
    request: { params, query },
    responses: { 200: json(timelineSchema) },
  });
  r.get('/v1/pools/:name/timeline', requireRole('admin'), async (req, res) => {
    const p = params.safeParse(req.params);
    if (!p.success) throw notFound('pool');
    const q = parseOrThrow(query, req.query);
    const now = Date.now();
    const since = q.since ?? now - DEFAULT_WINDOW_MS;
    const t = await readPoolTimeline(deps.db.pool, deps.locks, p.data.name, {
      since,
      limit: q.limit,
      after: q.after,
    });
    if (!t) throw notFound('pool');
    res.json({
      pool: p.data.name,
      since: iso(since),
      now: iso(now),
      devices: t.devices,
      data: t.holds.map((h) => ({ ...h, start: iso(h.start), end: h.end === null ? null : iso(h.end) })),
      switches: t.switches,
      nextCursor: t.nextCursor,
    });
  });
  return r;
}
