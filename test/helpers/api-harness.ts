/**
 * A real API server for a test file: its own database and Redis prefix, listening on a random port,
 * plus helpers that talk to it as an admin or a tenant would. `close()` stops it and deletes both.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { loadConfig, type Config } from '../../api/config.js';
import { createLogger } from '../../common/logger.js';
import { startApi, type RunningApi } from '../../api/server.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { deleteKeys, testPrefix, testRedisUrl } from './redis.js';

export interface Harness {
  api: RunningApi;
  config: Config;
  db: TestDatabase;
  adminKey: string;
  http: ReturnType<typeof request>;
  admin: (r: request.Test) => request.Test;
  createTenant(name?: string, quota?: Record<string, number>): Promise<TestTenant>;
  close(): Promise<void>;
}

export interface TestTenant {
  id: string;
  name: string;
  apiKey: string;
  token: string;
  as: (r: request.Test) => request.Test;
}

export function testEnv(
  dbUrl: string,
  prefix: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: dbUrl,
    REDIS_URL: testRedisUrl(),
    TIMESHARE_REDIS_PREFIX: prefix,
    TIMESHARE_ADMIN_KEY: `admin-${randomBytes(16).toString('hex')}`,
    TIMESHARE_JWT_SECRET: randomBytes(32).toString('hex'),
    TIMESHARE_STORAGE_ROOT: path.join(os.tmpdir(), `timeshare-test-storage-${prefix}`),
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...extra,
  };
}

export async function startHarness(extraEnv: Record<string, string> = {}): Promise<Harness> {
  const db = await createTestDatabase();
  const prefix = testPrefix();
  const config = loadConfig(testEnv(db.url, prefix, extraEnv));
  const api = await startApi(config, createLogger('api', config.LOG_LEVEL));
  const http = request(api.url);
  const adminKey = config.TIMESHARE_ADMIN_KEY;
  const admin = (r: request.Test) => r.set('Authorization', `Bearer ${adminKey}`);
  let tenantCount = 0;

  const harness: Harness = {
    api,
    config,
    db,
    adminKey,
    http,
    admin,
    async createTenant(name = `tenant-${++tenantCount}-${randomBytes(3).toString('hex')}`, quota) {
      const created = await admin(http.post('/v1/tenants')).send({ name }).expect(201);
      if (quota)
        await admin(http.put(`/v1/tenants/${created.body.id}/quota`))
          .send(quota)
          .expect(200);
      const tok = await http.post('/v1/auth/token').send({ apiKey: created.body.apiKey }).expect(200);
      const token = tok.body.token as string;
      return {
        id: created.body.id,
        name,
        apiKey: created.body.apiKey,
        token,
        as: (r: request.Test) => r.set('Authorization', `Bearer ${token}`),
      };
    },
    async close() {
      // The API a test restarted in its place, if it did (see test/e2e/api-outage.test.ts).
      await harness.api.stop();
      await db.drop();
      await deleteKeys(prefix);
      await rm(config.TIMESHARE_STORAGE_ROOT, { recursive: true, force: true });
    },
  };
  return harness;
}
