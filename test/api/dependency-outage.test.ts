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
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import request from 'supertest';
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
/** What the API behind the proxies logged (info and up), one JSON line each. */
const logs: { msg: string; level: number }[] = [];

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
  const logger = pino(
    { level: 'info', base: { proc: 'api' } },
    { write: (line: string) => logs.push(JSON.parse(line)) },
  );
  h.api = await startApi({ ...h.config, DATABASE_URL: pg.url }, logger);
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

/** A request's answer and how long it took, in ms. */
async function timed(r: request.Test): Promise<[request.Response, number]> {
  const t0 = performance.now();
  const res = await r;
  return [res, performance.now() - t0];
}

test("submissions, cancels and priority changes are not held by Redis's reconnection attempts", async () => {
  const job = { name: 'during', workflow: { task: { name: 'addition' } } };
  const normal: number[] = [];
  for (let i = 0; i < 5; i++) {
    const [res, ms] = await timed(tenant(http.post('/v1/jobs')).send(job));
    assert.equal(res.status, 201);
    normal.push(ms);
  }
  const fired = logs.length;

  redis.down();
  await until('the API to see Redis gone', () => h.api.deps.redis.status !== 'ready');
  const down: number[] = [];
  const ids: string[] = [];
  // Long enough for ioredis's reconnection delays to grow (50 ms more each attempt): before, each
  // submission waited out three of them, 0.3 s at first and seconds soon after.
  for (let i = 0; i < 12; i++) {
    const [res, ms] = await timed(tenant(http.post('/v1/jobs')).send(job));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.id);
    down.push(ms);
  }
  // With an Idempotency-Key (the single-statement path), a priority change and a cancel.
  const [keyed, keyedMs] = await timed(
    tenant(http.post('/v1/jobs')).set('Idempotency-Key', 'outage-1').send(job),
  );
  assert.equal(keyed.status, 201);
  const [patched, patchMs] = await timed(tenant(http.patch(`/v1/jobs/${ids[0]}`)).send({ priority: 'high' }));
  assert.equal(patched.status, 200);
  assert.equal(patched.body.priority, 'high');
  const [cancelled, cancelMs] = await timed(tenant(http.post(`/v1/jobs/${ids[1]}/cancel`)));
  assert.equal(cancelled.status, 200);
  assert.equal(cancelled.body.status, 'cancelled');
  const slowest = Math.max(...down, keyedMs, patchMs, cancelMs);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `submit ms with Redis up: median ${median(normal).toFixed(1)}; down: median ${median(down).toFixed(1)}, ` +
      `max ${Math.max(...down).toFixed(1)}; keyed ${keyedMs.toFixed(1)}, patch ${patchMs.toFixed(1)}, ` +
      `cancel ${cancelMs.toFixed(1)}`,
  );
  assert.ok(slowest < 250, `slowest answer ${slowest.toFixed(0)} ms while Redis is down`);
  const skipped = logs.slice(fired).filter((l) => /Redis notices skipped/.test(l.msg));
  assert.equal(skipped.length, 1, 'logged once an outage');

  redis.up();
  await until('the API to reconnect to Redis', () => h.api.deps.redis.status === 'ready');
  await tenant(http.post('/v1/jobs')).send(job).expect(201);
  assert.ok(logs.slice(fired).some((l) => /Redis notices are sent again/.test(l.msg)));
});

test('an admin preemption with Redis down answers 503 at once (only Redis carries it to the node), not 202', async () => {
  const running = (
    await tenant(http.post('/v1/jobs')).send({ name: 'held', workflow: { task: { name: 'addition' } } })
  ).body.id as string;
  await h.api.deps.db.pool.query(`UPDATE jobs SET status = 'running' WHERE id = $1`, [running]);
  redis.down();
  await until('the API to see Redis gone', () => h.api.deps.redis.status !== 'ready');
  const [res, ms] = await timed(h.admin(http.post(`/v1/jobs/${running}/preempt`)));
  assertUnavailable(res, 'admin preempt');
  assert.ok(ms < 1000, `answered in ${ms.toFixed(0)} ms, not after Redis's retries`);
  redis.up();
  await until('the API to reconnect to Redis', () => h.api.deps.redis.status === 'ready');
  await h.admin(http.post(`/v1/jobs/${running}/preempt`)).expect(202);
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
