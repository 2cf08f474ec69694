/**
 * Tenant routes for webhooks: register endpoints (the signing secret is shown once), list and
 * delete them, list an endpoint's deliveries and replay one. Delivery itself is the webhook
 * dispatcher's job (webhooks/main.ts), fed from the job_events log.
 */
import {
  createEndpoint,
  deleteEndpoint,
  findEndpoint,
  listDeliveries,
  listEndpoints,
  replayDelivery,
} from '../../webhooks/endpoints.js';
import { Router, type Request } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../../common/zod.js';
import { ApiError, notFound } from '../../common/errors.js';
import { requireRole, tenantOf } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import { uuidParam, queryInt } from '../http/schemas.js';
import { decodeBigintCursor, encodeCursor, page } from '../http/cursor.js';
import { parseOrThrow } from '../http/validate.js';
import { newSecret } from '../../webhooks/signing.js';
import { checkWebhookUrl, ResolveTimedOut, UrlRefused } from '../../webhooks/url-policy.js';
import { webhookEventTypes } from '../../webhooks/events.js';
import type { ApiDeps } from '../deps.js';

const MAX_ENDPOINTS_PER_TENANT = 20;
const REPLAY_WINDOW = '72 hours';

const createEndpointSchema = z
  .strictObject({
    url: z.string().min(1).max(2048).openapi({ description: 'http(s) URL that receives POSTs' }),
    events: z
      .array(z.enum(webhookEventTypes))
      .max(webhookEventTypes.length)
      // A repeat is a mistake in the caller's list (a copy meant as another type, perhaps), not
      // something to store as given or to drop without saying.
      .superRefine((events, ctx) => {
        const i = events.findIndex((e, at) => events.indexOf(e) < at);
        if (i >= 0) ctx.addIssue({ code: 'custom', path: [i], message: `"${events[i]}" is listed twice` });
      })
      .default([])
      .openapi({
        description: 'Event types to deliver, each at most once; empty or absent = all of these types',
        uniqueItems: true,
      }),
    description: z.string().max(256).optional(),
  })
  .openapi('CreateWebhookEndpoint');

const endpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .openapi('WebhookEndpoint');

const endpointCreatedSchema = endpointSchema
  .extend({
    secret: z.string().openapi({ description: 'Standard Webhooks signing secret (`whsec_…`), shown once' }),
  })
  .openapi('WebhookEndpointCreated');

const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
const deliverySchema = z
  .object({
    id: z.uuid(),
    webhookId: z
      .string()
      .openapi({ description: 'The `webhook-id` header: the same on every retry and replay' }),
    endpointId: z.uuid(),
    eventId: z.string(),
    eventType: z.string(),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int(),
    nextAttemptAt: z.iso.datetime().nullable(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    createdAt: z.iso.datetime(),
    deliveredAt: z.iso.datetime().nullable(),
  })
  .openapi('WebhookDelivery');

const deliveriesQuery = z.strictObject({
  status: z.enum(deliveryStatuses).optional(),
  limit: queryInt(1, 500).default(100),
  after: z.string().max(200).optional().openapi({ description: 'The `nextCursor` of the previous page' }),
});

type Row = Record<string, unknown> & { created_at: Date };

const endpointOf = (r: Row) => ({
  id: r.id as string,
  url: r.url as string,
  events: r.events as string[],
  description: (r.description as string | null) ?? null,
  createdAt: r.created_at.toISOString(),
});

const iso = (d: unknown) => (d instanceof Date ? d.toISOString() : null);
const deliveryOf = (r: Row) => ({
  id: r.id as string,
  webhookId: `msg_${r.id as string}`,
  endpointId: r.endpoint_id as string,
  eventId: String(r.event_id),
  eventType: r.event_type as string,
  status: r.status as (typeof deliveryStatuses)[number],
  attempts: r.attempts as number,
  nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
  lastStatusCode: (r.last_status_code as number | null) ?? null,
  lastError: (r.last_error as string | null) ?? null,
  payload: r.payload as Record<string, unknown>,
  createdAt: r.created_at.toISOString(),
  deliveredAt: iso(r.delivered_at),
});

export function webhookRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const tenantOnly = requireRole('tenant');
  const { pool } = deps.db;
  const idParams = z.object({ id: z.uuid() });

  async function ownEndpoint(req: Request): Promise<Row> {
    const id = req.params.id as string;
    if (!uuidParam.safeParse(id).success) throw notFound('webhook endpoint');
    const row = await findEndpoint(pool, tenantOf(req), id);
    if (!row) throw notFound('webhook endpoint');
    return row as Row;
  }

  registerRoute(registry, {
    method: 'post',
    operationId: 'createWebhook',
    path: '/v1/webhooks',
    summary: 'Register a webhook endpoint',
    description:
      'Every job event of yours of a type in `events` (none listed: of every type it accepts; other event ' +
      'types are not sent) is POSTed to `url`, signed per Standard Webhooks ' +
      '(`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the returned secret, at least once, ' +
      'retried with exponential backoff for up to 72 h. URLs on private or loopback addresses, or whose host ' +
      'does not resolve (what it resolves to cannot be checked), are refused unless the operator allows ' +
      'private addresses. A host whose DNS gives no answer within `TIMESHARE_WEBHOOK_DNS_TIMEOUT_MS` (5 s) is ' +
      'answered 503 `dns_timeout` with `Retry-After`: nothing is registered, and the request may be retried.',
    tags: ['webhooks'],
    request: { body: { content: { 'application/json': { schema: createEndpointSchema } } } },
    // conflict: the tenant already has MAX_ENDPOINTS_PER_TENANT endpoints.
    errors: ['conflict', 'dns_timeout'],
    responses: { 201: json(endpointCreatedSchema, 'Created; the secret is shown once') },
  });
  r.post('/v1/webhooks', tenantOnly, async (req, res) => {
    const body = parseOrThrow(createEndpointSchema, req.body);
    const timeoutMs = deps.config.TIMESHARE_WEBHOOK_DNS_TIMEOUT_MS;
    try {
      await checkWebhookUrl(
        body.url,
        deps.config.TIMESHARE_WEBHOOK_ALLOW_PRIVATE,
        deps.resolveHost,
        timeoutMs,
      );
    } catch (err) {
      if (err instanceof UrlRefused) throw new ApiError('invalid_request', `url: ${err.message}`, 'url');
      if (err instanceof ResolveTimedOut)
        throw new ApiError('dns_timeout', `url: ${err.message}; retry later`, 'url', {
          retryAfterSeconds: Math.ceil(timeoutMs / 1000),
        });
      throw err;
    }
    const secret = newSecret();
    const row = await createEndpoint(
      pool,
      {
        tenantId: tenantOf(req),
        url: body.url,
        events: body.events,
        description: body.description ?? null,
        secret,
      },
      MAX_ENDPOINTS_PER_TENANT,
    );
    if (!row) {
      throw new ApiError('conflict', `at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints per tenant`);
    }
    res.status(201).json({ ...endpointOf(row as Row), secret });
  });

  registerRoute(registry, {
    method: 'get',
    operationId: 'listWebhooks',
    path: '/v1/webhooks',
    summary: 'Your webhook endpoints',
    description: 'Every endpoint of the calling tenant, without its secret (shown once, at creation).',
    tags: ['webhooks'],
    responses: { 200: json(z.object({ data: z.array(endpointSchema) })) },
  });
  r.get('/v1/webhooks', tenantOnly, async (req, res) => {
    res.json({ data: (await listEndpoints(pool, tenantOf(req))).map((row) => endpointOf(row as Row)) });
  });

  registerRoute(registry, {
    method: 'delete',
    operationId: 'deleteWebhook',
    path: '/v1/webhooks/{id}',
    summary: 'Delete a webhook endpoint (and its deliveries)',
    description: 'Stops deliveries to the endpoint at once; its delivery records go with it.',
    tags: ['webhooks'],
    request: { params: idParams },
    responses: { 204: { description: 'Deleted' } },
  });
  r.delete('/v1/webhooks/:id', tenantOnly, async (req, res) => {
    const ep = await ownEndpoint(req);
    await deleteEndpoint(pool, ep.id as string);
    res.status(204).end();
  });

  registerRoute(registry, {
    method: 'get',
    operationId: 'listWebhookDeliveries',
    path: '/v1/webhooks/{id}/deliveries',
    summary: "An endpoint's deliveries, newest first",
    description:
      'Each delivery with its event, status, attempts, last response and next attempt; filter by status. Pages of `limit`, the next one `after` the `nextCursor`.',
    tags: ['webhooks'],
    request: { params: idParams, query: deliveriesQuery },
    responses: {
      200: json(z.object({ data: z.array(deliverySchema), nextCursor: z.string().nullable() })),
    },
  });
  r.get('/v1/webhooks/:id/deliveries', tenantOnly, async (req, res) => {
    const q = parseOrThrow(deliveriesQuery, req.query);
    const ep = await ownEndpoint(req);
    // Newest event first: the cursor is the last one's event id (and its delivery's id, for its shape).
    const c = q.after ? decodeBigintCursor(q.after) : null;
    const rows = await listDeliveries(pool, ep.id as string, q.status ?? null, q.limit + 1, c?.key ?? null);
    const { data, nextCursor } = page(rows as Row[], q.limit, (last) =>
      encodeCursor(String(last.event_id), last.id as string),
    );
    res.json({ data: data.map(deliveryOf), nextCursor });
  });

  registerRoute(registry, {
    method: 'post',
    operationId: 'replayWebhookDelivery',
    path: '/v1/webhooks/{id}/deliveries/{deliveryId}/replay',
    summary: 'Send a delivery again (same webhook-id), whatever its status',
    description:
      'The receiver gets the same `webhook-id`, so it can recognise the message as one it has seen.',
    tags: ['webhooks'],
    request: { params: z.object({ id: z.uuid(), deliveryId: z.uuid() }) },
    responses: { 202: json(deliverySchema, 'Queued for delivery') },
  });
  r.post('/v1/webhooks/:id/deliveries/:deliveryId/replay', tenantOnly, async (req, res) => {
    const ep = await ownEndpoint(req);
    const deliveryId = req.params.deliveryId as string;
    if (!uuidParam.safeParse(deliveryId).success) throw notFound('delivery');
    const row = await replayDelivery(pool, ep.id as string, deliveryId, REPLAY_WINDOW);
    if (!row) throw notFound('delivery');
    res.status(202).json(deliveryOf(row as Row));
  });

  return r;
}
