/**
 * Every route module, in mount order. app.ts mounts them; api/openapi-document.ts calls the same
 * list without connections to build the OpenAPI document offline, so both see the same routes.
 */
import type { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { SubmitJob } from '../jobs/submit.js';
import type { ApiDeps } from '../deps.js';
import { authRoutes } from './auth.js';
import { capacityRoutes } from './capacity.js';
import { healthRoutes } from './health.js';
import { infraRoutes } from './infra.js';
import { jobDataRoutes } from './job-data.js';
import { jobRoutes } from './jobs.js';
import { nodeCordonRoutes } from './node-cordon.js';
import { nodeJobRoutes } from './node-jobs.js';
import { poolTimelineRoutes } from './pool-timeline.js';
import { queueRoutes } from './queue.js';
import { tenantRoutes } from './tenants.js';
import { usageRoutes } from './usage.js';
import { webhookRoutes } from './webhooks.js';

export function apiRoutes(
  deps: ApiDeps,
  registry: OpenAPIRegistry,
  submit: SubmitJob,
  document: () => unknown,
): Router[] {
  // Job routes first: they carry nearly all traffic, and Express tries routers in order.
  return [
    jobRoutes(deps, registry, submit),
    healthRoutes(deps, registry, document),
    authRoutes(deps, registry),
    tenantRoutes(deps, registry),
    jobDataRoutes(deps, registry),
    usageRoutes(deps, registry),
    infraRoutes(deps, registry),
    nodeCordonRoutes(deps, registry),
    queueRoutes(deps, registry),
    capacityRoutes(deps, registry),
    poolTimelineRoutes(deps, registry),
    nodeJobRoutes(deps, registry),
    webhookRoutes(deps, registry),
  ];
}
