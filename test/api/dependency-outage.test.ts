/**
 * The API while PostgreSQL or Redis is down or restarting (a TCP proxy of this file's own stands
 * for each and is taken down; the shared servers are never touched): what a dependency outage
 * fails answers 503 `unavailable` with `Retry-After`, never 500 `internal`, on the routes written
 * by hand and on those through Prisma alike; and the job list, whose queue positions come from
 * Redis, still answers from PostgreSQL while Redis is down, without them. Both answer again once
 * the dependency is back.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import request from 'supertest';
import { createLogger } from '../../common/logger.js';
import { defaultPolicy } from '../../scheduler/core/policy.js';
import { startApi } from '../../api/server.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { startOutageProxy, type OutageProxy } from '../helpers/outage-proxy.js';
import { publishQueueViews } from '../helpers/queue-views.js';
import { testRedisUrl } from '../helpers/redis.js';

let h: Harness;
let pg: OutageProxy;
let redis: OutageProxy;
let http: ReturnType<typeof request>;
let token: string;
let jobId: string;

const tenant = (r: request.Test) => r.set('Authorization', `Bearer ${token}`);

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  redis = await startOutageProxy(testRedisUrl());
  h = await startHarness({ REDIS_URL: redis.url });
  // The same API again, its database behind a proxy too (the harness made the database).
  pg = await startOutageProxy(h.db.url);
  await h.api.stop();
  h.api = await startApi({ ...h.config, DATABASE_URL: pg.url }, createLogger('api', h.config.LOG_LEVEL));
  http = request(h.api.url);
  const created = await h.admin(http.post('/v1/tenants')).send({ name: 'outage' }).expect(201);
  token = (await http.post('/v1/auth/token').send({ apiKey: created.body.apiKey }).expect(200)).body.token;
  const job = { name: 'waits', workflow: { task: { name: 'addition' } } };
  jobId = (await tenant(http.post('/v1/jobs')).send(job).expect(201)).body.id;
  await publishQueueViews(h, defaultPolicy);
});
after(async () => {
  pg.up();
  redis.up();
  await h.close();
  await pg.close();
  await redis.close();
});

function assertUnavailable(res: request.Response, what: string): void {
  assert.equal(res.status, 503, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, 'unavailable', what);
  assert.equal(res.headers['retry-after'], '1', what);
}

test('the job list answers without queue positions while Redis is down', async () => {
  const before = await tenant(http.get('/v1/jobs')).expect(200);
  assert.equal(typeof before.body.data[0].queuePosition, 'number', 'the view is there while Redis is up');

  redis.down();
  await until('the API to see Redis gone', () => h.api.deps.redis.status !== 'ready');
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now();
    const list = await tenant(http.get('/v1/jobs')).expect(200);
    assert.ok(Date.now() - t0 < 1000, `answered in ${Date.now() - t0} ms, not after Redis's retries`);
    assert.equal(list.body.data[0].id, jobId);
    assert.equal(list.body.data[0].status, 'queued');
    assert.equal(list.body.data[0].queuePosition, null);
    assert.equal(list.body.data[0].estimatedStartAt, null);
  }
  const one = await tenant(http.get(`/v1/jobs/${jobId}`)).expect(200);
  assert.equal(one.body.queuePosition, null);
  // A route whose answer is Redis's data itself: 503, not 500.
  assertUnavailable(await h.admin(http.get('/v1/pools/default/queue')), 'the pool queue');

  redis.up();
  await until('the API to reconnect to Redis', () => h.api.deps.redis.status === 'ready');
  const back = await tenant(http.get('/v1/jobs')).expect(200);
  assert.equal(typeof back.body.data[0].queuePosition, 'number');
});

/** The job list (pool statements written by hand) and the tenant list (Prisma). */
async function assertBothUnavailable(what: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    assertUnavailable(await tenant(http.get('/v1/jobs')), `${what}: GET /v1/jobs #${i}`);
    assertUnavailable(await h.admin(http.get('/v1/tenants')), `${what}: GET /v1/tenants #${i}`);
    assertUnavailable(await tenant(http.get(`/v1/jobs/${jobId}`)), `${what}: GET /v1/jobs/{id} #${i}`);
  }
}

async function assertBack(): Promise<void> {
  pg.up();
  await until('the job list to answer again', async () => (await tenant(http.get('/v1/jobs'))).ok);
  await h.admin(http.get('/v1/tenants')).expect(200);
}

test('PostgreSQL starting up (57P03) answers 503 unavailable', async () => {
  pg.startingUp();
  await assertBothUnavailable('starting up');
  await assertBack();
});

test('PostgreSQL connections reset answer 503 unavailable', async () => {
  pg.down();
  await assertBothUnavailable('reset');
  await assertBack();
});
