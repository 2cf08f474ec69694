/** Liveness, readiness (PostgreSQL and Redis answer), Prometheus metrics and the OpenAPI document. */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { ApiError } from '../../common/errors.js';
import { json, registerRoute } from '../http/openapi.js';
import type { ApiDeps } from '../deps.js';

const CHECK_TIMEOUT_MS = 2000;

async function check(fn: () => Promise<unknown>): Promise<'ok' | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : 'failed';
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(deps: ApiDeps, registry: OpenAPIRegistry, document: () => unknown): Router {
  const r = Router();
  const status = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });

  registerRoute(registry, {
    method: 'get',
    path: '/healthz',
    operationId: 'getHealth',
    description: 'Answers while the process serves requests.',
    summary: 'Liveness',
    tags: ['ops'],
    auth: false,
    responses: { 200: json(status) },
  });
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/readyz',
    operationId: 'getReadiness',
    description: 'PostgreSQL and Redis answer within 2 s: 200, else 503 naming the failed check.',
    summary: 'Readiness: PostgreSQL and Redis reachable',
    tags: ['ops'],
    auth: false,
    responses: { 200: json(status) },
  });
  r.get('/readyz', async (_req, res) => {
    const [postgres, redis] = await Promise.all([
      check(() => deps.db.pool.query('SELECT 1')),
      check(() => deps.redis.ping()),
    ]);
    // Not ready is a 503 in the one error shape (503 `unavailable` is what any route answers when a
    // dependency is down), naming the checks that failed.
    if (postgres !== 'ok' || redis !== 'ok')
      throw new ApiError('unavailable', `not ready: postgres: ${postgres}; redis: ${redis}`);
    res.json({ status: 'ready', checks: { postgres, redis } });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/metrics',
    operationId: 'getPrometheusMetrics',
    description: 'Request latencies, submissions, admission batches, in the Prometheus text format.',
    summary: 'Prometheus metrics',
    tags: ['ops'],
    auth: false,
    responses: {
      200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
    },
  });
  r.get('/metrics', async (_req, res) => {
    res.set('Content-Type', deps.metrics.registry.contentType).send(await deps.metrics.collect());
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    description: 'The OpenAPI 3.1 document of this API, generated from the schemas that validate requests.',
    summary: 'This document',
    tags: ['ops'],
    auth: false,
    responses: {
      200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.object({}) } } },
    },
  });
  r.get('/v1/openapi.json', (_req, res) => {
    res.json(document());
  });
  return r;
}
