/** API keys as rows: another tenant key or a node key (returned once, stored hashed), listing, revocation. */
import { notFound } from '../../common/errors.js';
import type { PrismaClient } from '../../common/db.js';
import { generateApiKey } from '../auth/api-keys.js';
import { uuidParam } from '../http/schemas.js';

export async function createApiKey(
  prisma: PrismaClient,
  k: { role: 'tenant' | 'node'; tenantId?: string; name: string | null },
) {
  const key = generateApiKey(k.role);
  const row = await prisma.apiKey.create({
    data: { role: k.role, tenantId: k.tenantId ?? null, prefix: key.prefix, hash: key.hash, name: k.name },
  });
  return { id: row.id, prefix: key.prefix, apiKey: key.key };
}

/** Revokes a tenant's key; revoking a revoked key is a no-op, another tenant's key a 404. */
export async function revokeApiKey(prisma: PrismaClient, tenantId: string, keyId: string): Promise<void> {
  if (!uuidParam.safeParse(keyId).success) throw notFound('key');
  const n = await prisma.apiKey.updateMany({
    where: { id: keyId, tenantId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (n.count > 0) return;
  if (!(await prisma.apiKey.findFirst({ where: { id: keyId, tenantId } }))) throw notFound('key');
}

/** Revokes a node key; revoking a revoked key is a no-op, a tenant's key (or none) a 404. */
export async function revokeNodeKey(prisma: PrismaClient, keyId: string): Promise<void> {
  if (!uuidParam.safeParse(keyId).success) throw notFound('node key');
  const n = await prisma.apiKey.updateMany({
    where: { id: keyId, role: 'node', revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (n.count > 0) return;
  if (!(await prisma.apiKey.findFirst({ where: { id: keyId, role: 'node' } }))) throw notFound('node key');
}

/**
 * A page of keys in creation order, after a keyset cursor (created_at, id), revoked ones too; never
 * the secret or its hash (the prefix is what tells a leaked key apart). `of`: the node keys, or one
 * tenant's keys.
 */
export const listKeys = (
  prisma: PrismaClient,
  of: { role: 'node' } | { role: 'tenant'; tenantId: string },
  after: { at: Date; id: string } | null,
  take: number,
) =>
  prisma.apiKey.findMany({
    select: { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true },
    where: {
      ...of,
      ...(after
        ? { OR: [{ createdAt: { gt: after.at } }, { createdAt: after.at, id: { gt: after.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take,
  });
