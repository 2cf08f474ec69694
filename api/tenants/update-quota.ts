/** A partial update of a tenant's quota: fields left out keep their value. */
import type { PrismaClient } from '../../common/db.js';

export interface QuotaPatch {
  maxActiveJobs?: number | undefined;
  maxConcurrentDevices?: number | undefined;
  maxDevicesPerJob?: number | undefined;
  deviceHoursPerMonth?: number | undefined;
}

export const updateQuota = (prisma: PrismaClient, tenantId: string, patch: QuotaPatch) =>
  prisma.quota.update({ where: { tenantId }, data: patch });
