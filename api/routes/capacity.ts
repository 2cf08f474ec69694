/**
 * A pool's capacity signal for autoscalers, in the shape KEDA's `metrics-api` scaler reads: one
 * JSON object whose fields a `valueLocation` picks (`wantedDevices` to size the pool, 0 when it may
 * go to zero nodes). The scheduler's leader computes it each round (scheduler/core/demand.ts); a
 * pool it has not seen (no nodes, nothing queued or running) reads as zeros rather than 404, so a
 * scaler pointed at a pool that does not exist yet keeps working.
 */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { poolNameSchema } from '../../common/job-spec.js';
import { notFound } from '../../common/errors.js';
import { emptyCapacity, readPoolCapacity } from '../../common/capacity.js';
import { requireRole } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import type { ApiDeps } from '../deps.js';

const params = z.object({ name: poolNameSchema });
const devices = (description: string) => z.number().int().min(0).openapi({ description });

export const capacitySchema = z
  .object({
    pool: z.string(),
    wantedDevices: devices(
      'Devices the pool needs to run all of its work now: busyDevices + queuedDevices. 0 = nothing to run (scale to zero)',
    ),
    queuedDevices: devices(
      "Devices the queued jobs want (each its minimum); jobs waiting on their tenant's quota are not counted",
    ),
    busyDevices: devices('Devices held by running and placed jobs (draining and cordoned nodes included)'),
    idleDevices: devices('Devices on ready, uncordoned nodes that no job holds'),
    devices: devices(
      "Devices on the pool's ready nodes, less those an admin cordoned (POST /v1/nodes/{id}/cordon): they take no work",
    ),
    queuedJobs: devices('Jobs queued, whatever they wait for'),
    runningJobs: devices('Jobs placed or running'),
    updatedAt: z.iso.datetime().nullable().openapi({
      description: 'The scheduling round that computed it; null when no round has seen the pool',
    }),
  })
  .openapi('PoolCapacity');

export function capacityRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  registerRoute(registry, {
    method: 'get',
    path: '/v1/pools/{name}/capacity',
    operationId: 'getPoolCapacity',
    description:
      'For autoscalers (KEDA `metrics-api`: `valueLocation: wantedDevices`, `targetValue`: devices per node, bearer auth with the admin key). From the last scheduling round; a pool no round has seen reads as zeros.',
    summary: 'Devices a pool wants (queued and running work) and devices idle',
    tags: ['nodes'],
    request: { params },
    responses: { 200: json(capacitySchema) },
  });
  r.get('/v1/pools/:name/capacity', requireRole('admin'), async (req, res) => {
    const p = params.safeParse(req.params);
    if (!p.success) throw notFound('pool');
    const c = await readPoolCapacity(deps.redis, deps.names, p.data.name);
    const { at, ...fields } = c ?? { ...emptyCapacity(p.data.name), at: null };
    res.json({ ...fields, updatedAt: at === null ? null : new Date(at).toISOString() });
  });
  return r;
}
