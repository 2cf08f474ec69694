// What follows a commit on Redis (the scheduler's wake-up, job event notices) never holds its
// caller while Redis is down: not the API, not a node's registration, not the liveness sweep. Before,
// SchedulerWake.wake() and publishTransition waited out ioredis's reconnection attempts (0.3 s at
// first, growing to 8 s a command) and then threw, after the transition had committed. Redis is
// behind a proxy of this file's own (the shared server is never touched).
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createLogger } from '../../logger.js';
import { redisNames } from '../../queues.js';
import { connectRedis, type Redis } from '../../redis.js';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js';
import { startOutageProxy, type OutageProxy } from '../../../test/helpers/outage-proxy.js';
import { testRedisUrl } from '../../../test/helpers/redis.js';
import { insertRunningJob, tenantPoolNode } from '../../../scheduler/rounds/test/round-db.js';
import { requeueNodeJobs, type PublishContext } from '../publish.js';
import { SchedulerWake } from '../scheduler-wake.js';

// Nothing is written under it: every command here is a PUBLISH.
const names = redisNames('ts-test-outage-');
const logger = createLogger('test', 'silent');
let db: TestDatabase;
let pool: pg.Pool;
let proxy: OutageProxy;
let redis: Redis;
let ctx: PublishContext;

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await fn();
  return [r, performance.now() - t0];
}

before(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  pool.on('error', () => undefined); // the drop at the end terminates idle clients
  proxy = await startOutageProxy(testRedisUrl());
  redis = connectRedis(proxy.url);
  await until('Redis to be ready', () => redis.status === 'ready');
  ctx = { pool, redis, names, wake: new SchedulerWake(redis, names, logger), logger };
});

after(async () => {
  redis.disconnect();
  await proxy.close();
  await pool.end();
  await db.drop();
});

test('a wake-up is sent while Redis is up, and holds nobody while it goes down or is down', async () => {
  await ctx.wake.wake();
  // Called in the tick Redis goes: the connection still says ready, and the publish is in flight
  // when it is cut.
  proxy.down();
  const [cut, cutMs] = await timed(() => ctx.wake.wake());
  assert.ok(cutMs < 1000, `${cutMs.toFixed(0)} ms`);
  assert.ok(['pending', 'failed'].includes(cut), cut);
  await until('the connection to see Redis gone', () => redis.status !== 'ready');
  const [skipped, skippedMs] = await timed(() => ctx.wake.wake());
  assert.equal(skipped, 'skipped');
  assert.ok(skippedMs < 100, `${skippedMs.toFixed(0)} ms`);
  proxy.up();
  await until('Redis to be ready again', () => redis.status === 'ready');
  assert.equal(await ctx.wake.wake(), 'sent');
});

test("a node's jobs go back to the queue on PostgreSQL alone while Redis is down", async () => {
  const o = await tenantPoolNode(pool);
  const jobs = [];
  for (const device of [0, 1, 2])
    jobs.push(await insertRunningJob(pool, { ...o, device, name: `held-${device}`, spec: {} }));
  proxy.down();
  await until('the connection to see Redis gone', () => redis.status !== 'ready');
  // Long enough for ioredis's reconnection delays to grow past what one request may wait.
  await new Promise((r) => setTimeout(r, 1000));
  const [requeued, ms] = await timed(() => requeueNodeJobs(ctx, o.nodeId, 'node_lost', 'node restarted'));
  assert.equal(requeued, 3);
  assert.ok(ms < 1000, `requeued in ${ms.toFixed(0)} ms, not after Redis's retries`);
  const rows = await pool.query(`SELECT status::text AS status FROM jobs WHERE id = ANY($1)`, [jobs]);
  assert.deepEqual(
    rows.rows.map((r) => r.status),
    ['queued', 'queued', 'queued'],
  );
  proxy.up();
  await until('Redis to be ready again', () => redis.status === 'ready');
});
