/**
 * Redis loses everything while a job holds its device through a long stage (its warm-up). Its
 * hold is gone with the rest; nobody else took the device, so the job takes it again and carries
 * on. It has a single attempt: a lost hold used to crash it (LockLostError), and it failed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';
import { deleteKeys } from '../helpers/redis.js';
import { Redis } from 'ioredis';

let c: Cluster;
before(async () => {
  c = await startCluster();
});
after(() => c.close());

test(
  'Redis wiped during a long hold: the job takes its device again and succeeds',
  { timeout: 300_000 },
  async () => {
    await c.startWorker('holder', 1);
    const t = await c.h.createTenant('held');
    const spec = steadyJob('long-hold', 10);
    // A warm-up that runs its whole budget: one hold of several lease renewals.
    spec.workflow.warmup = { maxSteps: 2000, targetAccuracy: 0.99 };
    const id = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send({ ...spec, maxAttempts: 1 })
        .expect(201)
    ).body.id;
    await waitForStatus(c, t, id, ['running']);
    const redis = new Redis(c.env.REDIS_URL!);
    after(() => redis.disconnect());
    // The warm-up's hold, seen in the lock's own keys (`<prefix>…lock:dev:<device>`).
    const holding = async () => {
      const keys = await redis.keys(`${c.env.TIMESHARE_REDIS_PREFIX}*lock:dev:*`);
      for (const k of keys)
        if ((await redis.hget(k, 'stage')) === 'warmup' && (await redis.hget(k, 'holder'))) return true;
      return false;
    };
    await waitFor('the warm-up holding the device', holding, 60_000);
    // Past a lease renewal (a third of the lease, 1 s), then again while it still holds.
    await new Promise((r) => setTimeout(r, 1500));
    let wipes = 0;
    for (let i = 0; i < 3 && (i === 0 || (await holding())); i++) {
      await deleteKeys(c.env.TIMESHARE_REDIS_PREFIX!);
      wipes++;
      await new Promise((r) => setTimeout(r, 1500));
    }
    assert.ok(wipes >= 1, 'the warm-up ended before a wipe');
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed'], 240_000);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    assert.equal(job.attempts, 1);
    await waitFor('its events', async () =>
      (await eventsOf(c, t, id)).some((e) => e.type === 'job.succeeded'),
    );
  },
);
