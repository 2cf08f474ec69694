/** A page of tenants in creation order, after a keyset cursor (created_at, id). */
import type { PrismaClient } from '../../common/db.js';

export const listTenants = (prisma: PrismaClient, after: { at: Date; id: string } | null, take: number) =>
  prisma.tenant.findMany({
    include: { quota: true },
    where: after
      ? { OR: [{ createdAt: { gt: after.at } }, { createdAt: after.at, id: { gt: after.id } }] }
      : undefined,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take,
  });
