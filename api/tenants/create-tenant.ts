/** A tenant, its default quota and its first API key, in one write; a taken name is a 409. */
import { ApiError } from '../../common/errors.js';
import { Prisma, type PrismaClient } from '../../common/db.js';
import { generateApiKey } from '../auth/api-keys.js';

export async function createTenant(prisma: PrismaClient, t: { name: string; weight: number }) {
  const key = generateApiKey('tenant');
  try {
    const tenant = await prisma.tenant.create({
      data: {
        name: t.name,
        weight: t.weight,
        quota: { create: {} },
        apiKeys: { create: { role: 'tenant', prefix: key.prefix, hash: key.hash, name: 'default' } },
      },
      include: { quota: true, apiKeys: true },
    });
    return { tenant, apiKey: { id: tenant.apiKeys[0]!.id, prefix: key.prefix, key: key.key } };
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
      throw new ApiError('conflict', `a tenant named "${t.name}" exists`, 'name');
    }
    throw err;
  }
}
