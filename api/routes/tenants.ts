/** Admin routes: tenants, their API keys and quotas, and node credentials for worker daemons. */
import { Router } from 'express';
import { z } from '../../common/zod.js';
import { requireRole } from '../auth/middleware.js';
import { json, registerRoute } from '../http/openapi.js';
import {
  apiKeyCreatedSchema,
  createKeySchema,
  createTenantSchema,
  updateTenantSchema,
  nodeKeyListSchema,
  pageQuery,
  quotaSchema,
  quotaUpdateSchema,
  tenantCreatedSchema,
  tenantListSchema,
  tenantKeyListSchema,
  tenantSchema,
} from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import { decodeTimeCursor, encodeCursor, page } from '../http/cursor.js';
import type { ApiDeps } from '../deps.js';
import { createApiKey, listKeys, revokeApiKey, revokeNodeKey } from '../tenants/api-keys.js';
import { createTenant } from '../tenants/create-tenant.js';
import { findTenant } from '../tenants/find-tenant.js';
import { listTenants } from '../tenants/list-tenants.js';
import { updateQuota } from '../tenants/update-quota.js';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';

interface QuotaRow {
  maxActiveJobs: number;
  maxConcurrentDevices: number;
  maxDevicesPerJob: number;
  deviceHoursPerMonth: number;
}

export const quotaView = (q: QuotaRow) => ({
  maxActiveJobs: q.maxActiveJobs,
  maxConcurrentDevices: q.maxConcurrentDevices,
  maxDevicesPerJob: q.maxDevicesPerJob,
  deviceHoursPerMonth: q.deviceHoursPerMonth,
});

const tenantView = (t: {
  id: string;
  name: string;
  weight: number;
  createdAt: Date;
  quota: QuotaRow | null;
}) => ({
  id: t.id,
  name: t.name,
  weight: t.weight,
  createdAt: t.createdAt.toISOString(),
  quota: t.quota ? quotaView(t.quota) : null,
});

/** A key as the lists show it: never the secret or its hash. */
const keyView = (k: {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
});

const idParams = z.object({ id: z.uuid() });

export function tenantRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  const { prisma } = deps.db;
  const admin = requireRole('admin');

  registerRoute(registry, {
    method: 'post',
    path: '/v1/tenants',
    operationId: 'createTenant',
    description: 'The tenant gets the default quota and a first API key, shown only in this response.',
    summary: 'Create a tenant with its quota and first API key (the key is shown once)',
    tags: ['tenants'],
    request: { body: { content: { 'application/json': { schema: createTenantSchema } } } },
    errors: ['conflict'],
    responses: { 201: json(tenantCreatedSchema, 'Created') },
  });
  r.post('/v1/tenants', admin, async (req, res) => {
    const body = parseOrThrow(createTenantSchema, req.body);
    const { tenant, apiKey } = await createTenant(prisma, body);
    res
      .status(201)
      .json({ ...tenantView(tenant), apiKey: apiKey.key, apiKeyId: apiKey.id, apiKeyPrefix: apiKey.prefix });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/tenants',
    operationId: 'listTenants',
    description: 'Tenants in creation order; pages of `limit`, the next one `after` the `nextCursor`.',
    summary: 'List tenants',
    tags: ['tenants'],
    request: { query: pageQuery },
    responses: { 200: json(tenantListSchema) },
  });
  r.get('/v1/tenants', admin, async (req, res) => {
    const q = parseOrThrow(pageQuery, req.query);
    const tenants = await listTenants(prisma, q.after ? decodeTimeCursor(q.after) : null, q.limit + 1);
    const { data, nextCursor } = page(tenants, q.limit, (t) => encodeCursor(t.createdAt.toISOString(), t.id));
    res.json({ data: data.map(tenantView), nextCursor });
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/tenants/{id}',
    operationId: 'getTenant',
    description: 'A tenant with its quota.',
    summary: 'Get a tenant',
    tags: ['tenants'],
    request: { params: idParams },
    responses: { 200: json(tenantSchema) },
  });
  r.get('/v1/tenants/:id', admin, async (req, res) => {
    res.json(tenantView(await findTenant(prisma, req.params.id as string)));
  });

  registerRoute(registry, {
    method: 'patch',
    path: '/v1/tenants/{id}',
    operationId: 'updateTenant',
    description:
      "Its fair-share weight; the scheduler's next round uses it. The name is fixed at creation: it names the tenant in metrics and timelines.",
    summary: "Change a tenant's fair-share weight",
    tags: ['tenants'],
    request: { params: idParams, body: { content: { 'application/json': { schema: updateTenantSchema } } } },
    responses: { 200: json(tenantSchema) },
  });
  r.patch('/v1/tenants/:id', admin, async (req, res) => {
    // The tenant first: a body for a tenant that is not there is a 404, as for the quota.
    const t = await findTenant(prisma, req.params.id as string);
    const body = parseOrThrow(updateTenantSchema, req.body);
    await prisma.tenant.update({ where: { id: t.id }, data: { weight: body.weight } });
    req.log.info({ tenantId: t.id, weight: body.weight }, 'tenant weight changed');
    res.json(tenantView(await findTenant(prisma, t.id)));
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/tenants/{id}/keys',
    operationId: 'createTenantKey',
    description: 'Another API key for the tenant, optionally named; the key is shown only in this response.',
    summary: 'Create another API key for a tenant (shown once)',
    tags: ['tenants'],
    request: {
      params: idParams,
      body: { required: false, content: { 'application/json': { schema: createKeySchema } } },
    },
    responses: { 201: json(apiKeyCreatedSchema, 'Created') },
  });
  r.post('/v1/tenants/:id/keys', admin, async (req, res) => {
    const { name = null } = parseOrThrow(createKeySchema, req.body ?? {});
    const t = await findTenant(prisma, req.params.id as string);
    res.status(201).json(await createApiKey(prisma, { role: 'tenant', tenantId: t.id, name }));
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/tenants/{id}/keys',
    operationId: 'listTenantKeys',
    description:
      "The tenant's API keys in creation order, revoked ones included, without their secret: find a key by " +
      'its `prefix`, revoke it by its `id`. Pages of `limit`, the next one `after` the `nextCursor`.',
    summary: "List a tenant's API keys (id, name, prefix, last use, revocation)",
    tags: ['tenants'],
    request: { params: idParams, query: pageQuery },
    responses: { 200: json(tenantKeyListSchema) },
  });
  r.get('/v1/tenants/:id/keys', admin, async (req, res) => {
    const q = parseOrThrow(pageQuery, req.query);
    const t = await findTenant(prisma, req.params.id as string);
    const keys = await listKeys(
      prisma,
      { role: 'tenant', tenantId: t.id },
      q.after ? decodeTimeCursor(q.after) : null,
      q.limit + 1,
    );
    const { data, nextCursor } = page(keys, q.limit, (k) => encodeCursor(k.createdAt.toISOString(), k.id));
    res.json({ data: data.map(keyView), nextCursor });
  });

  registerRoute(registry, {
    method: 'delete',
    path: '/v1/tenants/{id}/keys/{keyId}',
    operationId: 'revokeTenantKey',
    description:
      'The key mints no more tokens; revoking a revoked key is a no-op. Find its id by its prefix in ' +
      'GET /v1/tenants/{id}/keys.',
    summary: 'Revoke an API key (tokens already minted expire on their own)',
    tags: ['tenants'],
    request: { params: z.object({ id: z.uuid(), keyId: z.uuid() }) },
    responses: { 204: { description: 'Revoked' } },
  });
  r.delete('/v1/tenants/:id/keys/:keyId', admin, async (req, res) => {
    const t = await findTenant(prisma, req.params.id as string);
    await revokeApiKey(prisma, t.id, req.params.keyId as string);
    res.status(204).end();
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/tenants/{id}/quota',
    operationId: 'getTenantQuota',
    description: "The tenant's limits.",
    summary: "Get a tenant's quota",
    tags: ['tenants'],
    request: { params: idParams },
    responses: { 200: json(quotaSchema) },
  });
  r.get('/v1/tenants/:id/quota', admin, async (req, res) => {
    const t = await findTenant(prisma, req.params.id as string);
    res.json(quotaView(t.quota!));
  });

  registerRoute(registry, {
    method: 'put',
    path: '/v1/tenants/{id}/quota',
    operationId: 'updateTenantQuota',
    description: 'Fields left out keep their value.',
    summary: "Update a tenant's quota (fields left out keep their value)",
    tags: ['tenants'],
    request: { params: idParams, body: { content: { 'application/json': { schema: quotaUpdateSchema } } } },
    responses: { 200: json(quotaSchema) },
  });
  r.put('/v1/tenants/:id/quota', admin, async (req, res) => {
    const body = parseOrThrow(quotaUpdateSchema, req.body);
    const t = await findTenant(prisma, req.params.id as string);
    const q = await updateQuota(prisma, t.id, body);
    res.json(quotaView(q));
  });

  registerRoute(registry, {
    method: 'post',
    path: '/v1/node-keys',
    operationId: 'createNodeKey',
    description: 'A credential a worker daemon exchanges for tokens; shown only in this response.',
    summary: 'Create a node credential for a worker daemon (shown once)',
    tags: ['nodes'],
    request: { body: { required: false, content: { 'application/json': { schema: createKeySchema } } } },
    responses: { 201: json(apiKeyCreatedSchema, 'Created') },
  });
  r.post('/v1/node-keys', admin, async (req, res) => {
    const { name = null } = parseOrThrow(createKeySchema, req.body ?? {});
    res.status(201).json(await createApiKey(prisma, { role: 'node', name }));
  });

  registerRoute(registry, {
    method: 'get',
    path: '/v1/node-keys',
    operationId: 'listNodeKeys',
    description:
      'Node keys in creation order, revoked ones included, without their secret: find a key by its `prefix`. ' +
      'Pages of `limit`, the next one `after` the `nextCursor`.',
    summary: 'List node credentials (id, name, prefix, last use, revocation)',
    tags: ['nodes'],
    request: { query: pageQuery },
    responses: { 200: json(nodeKeyListSchema) },
  });
  r.get('/v1/node-keys', admin, async (req, res) => {
    const q = parseOrThrow(pageQuery, req.query);
    const keys = await listKeys(
      prisma,
      { role: 'node' },
      q.after ? decodeTimeCursor(q.after) : null,
      q.limit + 1,
    );
    const { data, nextCursor } = page(keys, q.limit, (k) => encodeCursor(k.createdAt.toISOString(), k.id));
    res.json({ data: data.map(keyView), nextCursor });
  });

  registerRoute(registry, {
    method: 'delete',
    path: '/v1/node-keys/{id}',
    operationId: 'revokeNodeKey',
    description:
      'The key mints no more tokens; revoking a revoked key is a no-op. Tokens already minted stay valid ' +
      'until they expire (TIMESHARE_JWT_TTL_SECONDS); a node registered with the key stays bound to it, ' +
      'so release it (POST /v1/nodes/{id}/release) to cut those tokens off at once or let another key register it.',
    summary: 'Revoke a node key (tokens already minted expire on their own)',
    tags: ['nodes'],
    request: { params: idParams },
    responses: { 204: { description: 'Revoked' } },
  });
  r.delete('/v1/node-keys/:id', admin, async (req, res) => {
    await revokeNodeKey(prisma, req.params.id as string);
    res.status(204).end();
  });

  return r;
}
