/**
 * Pools and nodes. Admins read them; worker daemons (node credentials) register their devices and
 * heartbeat. A node's pool is created on first registration.
 */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { ApiError, notFound } from '../../common/errors.js';
import { requeueNodeJobs } from '../../common/jobs/publish.js';
import { requireRole } from '../auth/middleware.js';
import { ownNodeGuard } from './node-jobs.js';
import { json, registerRoute, retryAfter } from '../http/openapi.js';
import {
  epochMsQuery,
  nodeListSchema,
  pageQuery,
  poolListSchema,
  timelineAfter,
  timelineNextCursor,
  uuidParam,
  queryInt,
} from '../http/schemas.js';
import { decodeCursor, decodeTimeCursor, encodeCursor, page } from '../http/cursor.js';
import { heartbeatSchema, registerNodeSchema } from '../../common/node-protocol/index.js';
import { parseOrThrow } from '../http/validate.js';
import { nodeMessage, nodeProtocolHeaders } from '../http/node-protocol.js';
import type { ApiDeps } from '../deps.js';
import { nodeView } from '../nodes/view.js';

export function infraRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const { prisma } = deps.db;

  registerRoute(registry, {
    method: 'get',
    path: '/v1/pools',
    operationId: 'listPools',
    description: 'Pools by name; pages of `limit`, the next one `after` the `nextCursor`.',
    summary: 'List pools with their node and device counts',
    tags: ['nodes'],
    request: { query: pageQuery },
    responses: { 200: json(poolListSchema) },
  });
  r.get('/v1/pools', requireRole('admin'), async (req, res) => {
    const q = parseOrThrow(pageQuery, req.query);
    // Names are unique: the name alone orders the pages (the id in the cursor is only its shape).
    const c = q.after ? decodeCursor(q.after) : null;
    const pools = await prisma.pool.findMany({
      where: c ? { name: { gt: c.key } } : undefined,
      orderBy: { name: 'asc' },
      take: q.limit + 1,
      include: {
        nodes: { where: { status: { not: 'lost' } }, include: { _count: { select: { devices: true } } } },
      },
    });
    const { data, nextCursor } = page(pools, q.limit, (p) => encodeCursor(p.name, p.id));
    res.json({
      data: data.map((p) => ({
        id: p.id,
        name: p.name,
        deviceType: p.deviceType,
        nodes: p.nodes.length,
        devices: p.nodes.reduce((n, node) => n + node._count.devices, 0),
      })),
      nextCursor,
    });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/nodes',
    operationId: 'listNodes',
    description: 'Nodes in registration order; pages of `limit`, the next one `after` the `nextCursor`.',
    summary: 'List worker nodes and their devices',
    tags: ['nodes'],
    request: { query: pageQuery },
    responses: { 200: json(nodeListSchema) },
  });
  r.get('/v1/nodes', requireRole('admin'), async (req, res) => {
    const q = parseOrThrow(pageQuery, req.query);
    const c = q.after ? decodeTimeCursor(q.after) : null;
    const nodes = await prisma.node.findMany({
      where: c
        ? { OR: [{ registeredAt: { gt: c.at } }, { registeredAt: c.at, id: { gt: c.id } }] }
        : undefined,
      orderBy: [{ registeredAt: 'asc' }, { id: 'asc' }],
      take: q.limit + 1,
      include: { pool: true, devices: { orderBy: { index: 'asc' } } },
    });
    const { data, nextCursor } = page(nodes, q.limit, (n) =>
      encodeCursor(n.registeredAt.toISOString(), n.id),
    );
    res.json({ nextCursor, data: data.map(nodeView) });
  });

  const timelineQuery = z.strictObject({
    since: epochMsQuery()
      .optional()
      .openapi({ description: 'Holds that ended at or after this time (ms), and those still open' }),
    limit: queryInt(1, 10_000)
      .default(1000)
      .openapi({ description: 'Holds a page lists at most (a grant of several devices is never split)' }),
    after: timelineAfter,
  });
  const intervalSchema = z
    .object({
      device: z.number().int(),
      job: z.string(),
      stage: z.string(),
      holder: z.string(),
      token: z.number().int(),
      start: z.iso.datetime(),
      end: z.iso.datetime().nullable(),
      reason: z.enum(['released', 'lapsed', 'revoked']).nullable(),
    })
    .openapi('LockInterval');
  registerRoute(registry, {
    method: 'get',
    path: '/v1/nodes/{id}/timeline',
    operationId: 'getNodeTimeline',
    description:
      'Device-lock holds on the node in the order they were granted, from `since` (ms), each with its end once it has ended; pages of `limit`, the next one `after` the `nextCursor`.',
    summary:
      'The device-lock timeline of a node: every hold of each device (job, stage, fencing token, start, end)',
    tags: ['nodes'],
    request: { params: z.object({ id: z.uuid() }), query: timelineQuery },
    responses: {
      200: json(
        z.object({
          data: z.array(intervalSchema),
          nextCursor: timelineNextCursor,
          recordedSince: z.iso
            .datetime()
            .nullable()
            .openapi({
              description:
                'When the oldest record the lock timeline still keeps was written; null while it keeps none. Nothing ' +
                'before it is known: Redis keeps the timeline in memory only, so a Redis restart starts it anew (holds ' +
                'taken back after it are recorded again), and it is trimmed to its newest ~100,000 entries',
            }),
        }),
      ),
    },
  });
  r.get('/v1/nodes/:id/timeline', requireRole('admin'), async (req, res) => {
    const q = parseOrThrow(timelineQuery, req.query);
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('node');
    const node = await prisma.node.findUnique({ where: { id } });
    if (!node) throw notFound('node');
    const page = await deps.locks.readTimeline({
      devicePrefix: `${id}/`,
      since: q.since,
      limit: q.limit,
      after: q.after,
    });
    res.json({
      data: page.intervals.map((i) => ({
        device: Number(i.device.slice(id.length + 1)),
        job: i.job,
        stage: i.stage,
        holder: i.holder,
        token: i.token,
        start: new Date(i.start).toISOString(),
        end: i.end === null ? null : new Date(i.end).toISOString(),
        reason: i.reason,
      })),
      nextCursor: page.cursor,
      recordedSince: page.recordedSince === null ? null : new Date(page.recordedSince).toISOString(),
    });
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/register',
    operationId: 'registerNode',
    description:
      'Creates or updates the node and its pool; what the node held before goes back to the queue.',
    summary: 'A worker daemon registers its devices (node credentials)',
    tags: ['nodes'],
    request: {
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: registerNodeSchema } } },
    },
    errors: ['conflict', 'node_protocol_unsupported'], // conflict: the name belongs to a node another key registered
    // A released node still holding its old key's runs: 409 with Retry-After, which a daemon waits out.
    errorHeaders: {
      409: retryAfter(
        "On a released node that still holds its old key's runs: seconds to wait before registering again",
      ),
    },
    responses: { 200: json(z.object({ id: z.uuid(), name: z.string(), pool: z.string() })) },
  });
  r.post('/v1/nodes/register', requireRole('node'), async (req, res) => {
    const body = nodeMessage(req, 'register', registerNodeSchema);
    const keyId = req.principal!.sub;
    const node = await prisma.$transaction(async (tx) => {
      // ON CONFLICT, not Prisma's upsert: two daemons registering at once must not race on the name.
      const [pool] = await tx.$queryRaw<{ id: string; name: string }[]>`
        INSERT INTO pools (name, device_type) VALUES (${body.pool}, ${body.deviceType})
        ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id, name`;
      if (!pool) throw new Error('pool upsert returned nothing');
      // A released node's runs stay its own until the scheduler requeues them, once the node has been
      // silent for the node timeout (scheduler/liveness.ts): a daemon of the old key may still be
      // running them, and stops them itself within that time. Registered now, a new daemon would be
      // assigned a placed one beside it. Locked, so the requeue and this registration do not cross.
      const [fenced] = await tx.$queryRaw<{ id: string }[]>`
        SELECT n.id FROM nodes n
         WHERE n.name = ${body.name} AND n.key_id IS NULL
           AND EXISTS (SELECT 1 FROM jobs j WHERE j.node_id = n.id AND j.status IN ('placed', 'running'))
           FOR UPDATE OF n`;
      if (fenced)
        throw new ApiError(
          'conflict',
          `node ${body.name} was released and still holds its old key's runs; they go back to the queue once ` +
            'the node has been silent for the node timeout (a daemon still running them stops them by then): retry after that',
          'name',
          { retryAfterSeconds: 1 },
        );
      // A node belongs to the key that registered it: another key may take the name only after an
      // admin released the node (key_id NULL). One statement, so two keys racing cannot both win.
      const [n] = await tx.$queryRaw<{ id: string; name: string }[]>`
        INSERT INTO nodes (name, pool_id, labels, key_id)
        VALUES (${body.name}, ${pool.id}::uuid, ${JSON.stringify(body.labels)}::jsonb, ${keyId}::uuid)
        ON CONFLICT (name) DO UPDATE SET pool_id = EXCLUDED.pool_id, labels = EXCLUDED.labels,
          status = 'ready', last_heartbeat_at = now(), key_id = EXCLUDED.key_id
          WHERE nodes.key_id IS NULL OR nodes.key_id = EXCLUDED.key_id
        RETURNING id, name`;
      if (!n)
        throw new ApiError(
          'conflict',
          `node ${body.name} is registered with another node key; an admin can release it (POST /v1/nodes/{id}/release)`,
          'name',
        );
      await tx.device.deleteMany({
        where: { nodeId: n.id, index: { notIn: body.devices.map((d) => d.index) } },
      });
      for (const d of body.devices) {
        const data = {
          kind: d.kind,
          memoryBytes: BigInt(d.memoryBytes),
          freeMemoryBytes: BigInt(d.freeMemoryBytes),
          threads: d.threads,
        };
        await tx.device.upsert({
          where: { nodeId_index: { nodeId: n.id, index: d.index } },
          create: { nodeId: n.id, index: d.index, ...data },
          update: data,
        });
      }
      return { id: n.id, name: n.name, pool: pool.name };
    });
    // A (re)registering daemon runs no job processes: whatever it held before goes back to the queue.
    await requeueNodeJobs(
      { ...deps, pool: deps.db.pool },
      node.id,
      'node_lost',
      `node ${node.name} restarted`,
    );
    // New devices: the next round places what waits for them now, not at its next tick.
    await deps.wake.wake();
    req.log.info({ node }, 'node registered');
    res.json(node);
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/heartbeat',
    operationId: 'heartbeatNode',
    description: 'Revives a lost node (a draining one stays draining) and records free memory per device.',
    summary: 'A worker daemon reports it is alive, with free memory per device',
    tags: ['nodes'],
    request: {
      params: z.object({ id: z.uuid() }),
      headers: nodeProtocolHeaders,
      body: { content: { 'application/json': { schema: heartbeatSchema } } },
    },
    errors: ['node_protocol_unsupported'],
    responses: { 204: { description: 'Recorded' } },
  });
  const ownNode = ownNodeGuard(deps.db.pool);

  r.post('/v1/nodes/:id/heartbeat', ...ownNode, async (req, res) => {
    const id = req.params.id as string;
    const body = nodeMessage(req, 'heartbeat', heartbeatSchema);
    // A beat revives a lost node but leaves a draining one draining: only registering again
    // (a restarted daemon) makes it ready.
    const now = new Date();
    const revived = await prisma.node.updateMany({
      where: { id, status: { not: 'draining' } },
      data: { lastHeartbeatAt: now, status: 'ready' },
    });
    if (revived.count === 0) {
      const draining = await prisma.node.updateMany({ where: { id }, data: { lastHeartbeatAt: now } });
      if (draining.count === 0) throw notFound('node');
    }
    for (const d of body.devices) {
      await prisma.device.updateMany({
        where: { nodeId: id, index: d.index },
        data: { freeMemoryBytes: BigInt(d.freeMemoryBytes) },
      });
    }
    res.status(204).end();
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/release',
    operationId: 'releaseNode',
    summary: 'Unbind a node from the node key that registered it, so that another key may register it',
    description:
      'For a machine whose key was lost or replaced. The old key can no longer act for the node, and the node is ' +
      '`lost` until a daemon registers it again. Its jobs go back to the queue once the node has been silent for the ' +
      'node timeout (TIMESHARE_NODE_TIMEOUT_MS, counted from its last accepted heartbeat): a daemon of the old key ' +
      'that still runs them stops them within that time, so a job never runs beside its requeued self. Until then ' +
      'a registration of the node answers 409 with Retry-After.',
    tags: ['nodes'],
    request: { params: z.object({ id: z.uuid() }) },
    responses: { 200: json(z.object({ id: z.uuid(), name: z.string(), released: z.literal(true) })) },
  });
  r.post('/v1/nodes/:id/release', requireRole('admin'), async (req, res) => {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('node');
    const [n] = await deps.db.pool
      .query<{ id: string; name: string }>(
        `UPDATE nodes SET key_id = NULL, status = 'lost' WHERE id = $1 RETURNING id, name`,
        [id],
      )
      .then((q) => q.rows);
    if (!n) throw notFound('node');
    // Its runs are requeued by the scheduler's liveness sweep, fenced by the node timeout (above).
    req.log.info({ nodeId: n.id }, 'node released');
    res.json({ id: n.id, name: n.name, released: true });
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/drain',
    operationId: 'drainNode',
    description: 'Nothing new is placed on the node; its jobs checkpoint and return to the queue.',
    summary:
      'A worker daemon is shutting down: no new placements on it; its jobs checkpoint and come back through /finish',
    tags: ['nodes'],
    request: { params: z.object({ id: z.uuid() }), headers: nodeProtocolHeaders },
    errors: ['node_protocol_unsupported'],
    responses: { 204: { description: 'The node is draining' } },
  });
  r.post('/v1/nodes/:id/drain', ...ownNode, async (req, res) => {
    const id = req.params.id as string;
    const updated = await prisma.node.updateMany({ where: { id }, data: { status: 'draining' } });
    if (updated.count === 0) throw notFound('node');
    req.log.info({ nodeId: id }, 'node draining');
    res.status(204).end();
  });

  return r;
}
