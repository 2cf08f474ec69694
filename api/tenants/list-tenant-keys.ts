/** A page of one tenant's API keys in creation order, revoked ones too, after a keyset cursor (created_at, id). */
import type { PrismaClient } from '../../common/db.js';

/** Never the secret or its hash: the prefix is what tells a leaked key apart. */
export const listTenantKeys = (
  prisma: PrismaClient,
  tenantId: string,
  after: { at: Date; id: string } | null,
  take: number,
) =>
  prisma.apiKey.findMany({
    select: { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, revokedAt: true },
    where: {
      tenantId,
      role: 'tenant',
      ...(after
        ? { OR: [{ createdAt: { gt: after.at } }, { createdAt: after.at, id: { gt: after.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take,
  });
