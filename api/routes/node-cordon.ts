/**
 * An admin takes a node out of service and brings it back: POST /v1/nodes/{id}/cordon (optionally
 * evicting its jobs, Kubernetes' drain) and POST /v1/nodes/{id}/uncordon. What the flag does and
 * what must stay true: api/nodes/cordon.ts.
 */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { notFound } from '../../common/errors.js';
import { requireRole } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { cordonNodeSchema, nodeSchema, uuidParam } from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { cordonNode, uncordonNode } from '../nodes/cordon.js';
import { nodeView } from '../nodes/view.js';
import type { ApiDeps } from '../deps.js';

export function nodeCordonRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const { prisma } = deps.db;
  const params = z.object({ id: z.uuid() });

  /** The node as GET /v1/nodes shows it, after the change; 404 when it is gone. */
  const answer = async (id: string) => {
    const n = await prisma.node.findUnique({
      where: { id },
      include: { pool: true, devices: { orderBy: { index: 'asc' } } },
    });
    if (!n) throw notFound('node');
    return nodeView(n);
  };

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/cordon',
    operationId: 'cordonNode',
    summary: 'Take a node out of service: nothing new is placed on it (with `evict`, its jobs move off too)',
    description:
      "From the scheduler's next round no job is placed on the node, joins a job there, grows, moves or is " +
      "reserved onto it; its jobs keep running and count toward their tenants' shares and quotas. With " +
      '`evict: true` each job running there is also given a preemption notice (reason `drain`, whatever its ' +
      'minimum run time): it checkpoints within the grace period, returns to the queue (`job.preempted`) and ' +
      "resumes from its checkpoint on another node. Apart from the node's `status`: its daemon registering " +
      'again, its heartbeats and its own drain leave the cordon as it is; only uncordon lifts it. Idempotent: ' +
      'the node keeps the time it was first cordoned, takes a new `reason` when one is given, and stays ' +
      'evicting once it was. A job only cordoned nodes can hold waits with reason `capacity`.',
    tags: ['nodes'],
    request: {
      params,
      body: { required: false, content: { 'application/json': { schema: cordonNodeSchema } } },
    },
    responses: { 200: json(nodeSchema, 'The node, cordoned') },
  });
  r.post('/v1/nodes/:id/cordon', requireRole('admin'), async (req, res) => {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('node');
    const body = parseOrThrow(cordonNodeSchema, req.body ?? {});
    const found = await cordonNode(deps.db.pool, id, {
      reason: body.reason ?? null,
      evict: body.evict === true,
    });
    if (!found) throw notFound('node');
    // The next round sees it now (its notices, with `evict`), not at its next tick.
    await deps.wake.wake();
    req.log.info({ nodeId: id, evict: body.evict === true }, 'node cordoned');
    res.json(await answer(id));
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/nodes/{id}/uncordon',
    operationId: 'uncordonNode',
    summary: 'Bring a cordoned node back into service: jobs may be placed on it again',
    description:
      "From the scheduler's next round the node takes jobs again (if its daemon has it `ready`); the reason " +
      'and any eviction go with the cordon. Jobs it evicted stay where they resumed. Idempotent: a node that ' +
      'is not cordoned is answered as it is.',
    tags: ['nodes'],
    request: { params },
    responses: { 200: json(nodeSchema, 'The node, not cordoned') },
  });
  r.post('/v1/nodes/:id/uncordon', requireRole('admin'), async (req, res) => {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('node');
    if (!(await uncordonNode(deps.db.pool, id))) throw notFound('node');
    // Devices to place on again: the next round runs now.
    await deps.wake.wake();
    req.log.info({ nodeId: id }, 'node uncordoned');
    res.json(await answer(id));
  });

  return r;
}
