/**
 * A node registers and heartbeats on PostgreSQL alone while Redis is down. A restarted daemon's
 * registration puts back in the queue what its node held, and the Redis notices after that commit
 * (job events, the scheduler's wake-up) used to wait out ioredis's reconnection attempts and then
 * fail the request (503) after the requeue had committed: a fleet restarting during a Redis outage
 * could not register. Redis is behind a proxy of this file's own (the shared server is untouched).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { performance } from 'node:perf_hooks';
import type request from 'supertest';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { startOutageProxy, type OutageProxy } from '../helpers/outage-proxy.js';
import { testRedisUrl } from '../helpers/redis.js';
import { oneDevice, placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let redis: OutageProxy;

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function timed(r: request.Test): Promise<[request.Response, number]> {
  const t0 = performance.now();
  const res = await r;
  return [res, performance.now() - t0];
}

before(async () => {
  redis = await startOutageProxy(testRedisUrl());
  h = await startHarness({ REDIS_URL: redis.url });
});
after(async () => {
  redis.up();
  await h.close();
  await redis.close();
});

test('a daemon registers again and heartbeats while Redis is down; what its node held is requeued', async () => {
  const node: TestNode = await registerTestNode(h, 'restarts');
  const tenant = await h.createTenant();
  const jobId = (
    await tenant.as(h.http.post('/v1/jobs')).send({ name: 'held', workflow: { task: { name: 'addition' } } })
  ).body.id as string;
  await placeOnNode(h, node.id, jobId);

  redis.down();
  await until('the API to see Redis gone', () => h.api.deps.redis.status !== 'ready');
  // Long enough for ioredis's reconnection delays to grow past what one request may wait.
  await new Promise((r) => setTimeout(r, 1000));
  const [reg, regMs] = await timed(
    node.as(h.http.post('/v1/nodes/register')).send({ name: 'restarts', devices: oneDevice }),
  );
  console.log(`registration with Redis down: ${reg.status} in ${regMs.toFixed(0)} ms`);
  assert.equal(reg.status, 200, JSON.stringify(reg.body));
  assert.equal(reg.body.id, node.id);
  assert.ok(regMs < 1000, `registered in ${regMs.toFixed(0)} ms, not after Redis's retries`);
  const job = await tenant.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200);
  assert.equal(job.body.status, 'queued');

  const [beat, beatMs] = await timed(
    node
      .as(h.http.post(`/v1/nodes/${node.id}/heartbeat`))
      .send({ devices: [{ index: 0, freeMemoryBytes: 5e8 }] }),
  );
  assert.equal(beat.status, 204);
  assert.ok(beatMs < 1000, `heartbeat in ${beatMs.toFixed(0)} ms`);

  redis.up();
  await until('the API to reconnect to Redis', () => h.api.deps.redis.status === 'ready');
});
