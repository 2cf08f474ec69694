/** API key → short-lived JWT. Revoked and unknown keys get the same 401 (nothing to probe). */
import { Router } from 'express';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { ApiError } from '../../common/errors.js';
import { hashSecret } from '../auth/api-keys.js';
import { issueToken } from '../auth/jwt.js';
import { json, registerRoute } from '../http/openapi.js';
import { tokenRequestSchema, tokenSchema } from '../http/schemas.js';
import { parseOrThrow } from '../http/validate.js';
import type { ApiDeps } from '../deps.js';

export function authRoutes(deps: ApiDeps, registry: OpenAPIRegistry): Router {
  const r = Router();
  registerRoute(registry, {
    method: 'post',
    path: '/v1/auth/token',
    operationId: 'createToken',
    description:
      'A tenant or node API key for a JWT valid for TIMESHARE_JWT_TTL_SECONDS. Unknown and revoked keys get the same 401. Limited per client address.',
    summary: 'Exchange an API key (tenant or node) for a short-lived JWT',
    tags: ['auth'],
    auth: false,
    perAddress: true,
    request: { body: { content: { 'application/json': { schema: tokenRequestSchema } } } },
    responses: { 200: json(tokenSchema) },
  });
  r.post('/v1/auth/token', async (req, res) => {
    const { apiKey } = parseOrThrow(tokenRequestSchema, req.body);
    const row = await deps.db.prisma.apiKey.findUnique({
      where: { hash: hashSecret(apiKey) },
      include: { tenant: { select: { id: true, name: true } } },
    });
    if (!row || row.revokedAt) throw new ApiError('unauthorized', 'invalid or revoked API key', 'apiKey');
    const sub = row.role === 'tenant' ? row.tenantId! : row.id;
    const issued = issueToken(deps.config.TIMESHARE_JWT_SECRET, deps.config.TIMESHARE_JWT_TTL_SECONDS, {
      role: row.role,
      sub,
      keyId: row.id,
    });
    // Last use is informational; don't make the exchange wait for it.
    deps.db.prisma.apiKey
      .update({ where: { id: row.id }, data: { lastUsedAt: new Date() } })
      .catch(() => undefined);
    res.json({
      token: issued.token,
      tokenType: 'Bearer',
      expiresAt: issued.expiresAt.toISOString(),
      role: row.role,
      tenant: row.tenant ? { id: row.tenant.id, name: row.tenant.name } : null,
    });
  });
  return r;
}
