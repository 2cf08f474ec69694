/** A tenant with its quota by id; a malformed id is as missing as an unknown one (404). */
import { notFound } from '../../common/errors.js';
import type { PrismaClient } from '../../common/db.js';
import { uuidParam } from '../http/schemas.js';

export async function findTenant(prisma: PrismaClient, id: string) {
  if (!uuidParam.safeParse(id).success) throw notFound('tenant');
  const t = await prisma.tenant.findUnique({ where: { id }, include: { quota: true } });
  if (!t) throw notFound('tenant');
  return t;
}
