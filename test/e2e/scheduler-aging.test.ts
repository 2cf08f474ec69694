/**
 * Aging: a low-priority job behind a stream of normal-priority submissions would wait as long as
 * the stream lasts; past the aging bound it goes first and starts while jobs submitted before it
 * ran are still queued.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobOf, startCluster, steadyJob, waitFor, waitForStatus, type Cluster } from '../helpers/cluster.js';

let c: Cluster;

before(async () => {
  c = await startCluster({ maxJobsPerDevice: 1, env: { TIMESHARE_AGING_BOUND_SECONDS: '4' } });
  await c.startWorker('aging-node', 1);
});
after(() => c.close());

test(
  'a job past the aging bound starts ahead of higher-priority jobs queued before it',
  { timeout: 240_000 },
  async (ctx) => {
    const t = await c.h.createTenant('aging');
    const submit = async (name: string, priority: string, steps: number) =>
      (
        await t
          .as(c.h.http.post('/v1/jobs'))
          .send({ ...steadyJob(name, steps), priority })
          .expect(201)
      ).body.id as string;
    const first = await submit('first', 'normal', 30);
    await waitForStatus(c, t, first, ['running']);
    const low = await submit('low', 'low', 5);
    const lowQueuedAt = Date.now();
    const stream: string[] = [];
    let lowStarted: number | null = null;
    for (let i = 0; i < 40 && lowStarted === null; i++) {
      stream.push(await submit(`normal-${i}`, 'normal', 5));
      await new Promise((r) => setTimeout(r, 1000));
      const l = await jobOf(c, t, low);
      if (l.status !== 'queued') lowStarted = Date.now();
    }
    assert.ok(lowStarted, 'the low-priority job started while the stream went on');
    const waiting = [];
    for (const id of stream) if ((await jobOf(c, t, id)).status === 'queued') waiting.push(id);
    ctx.diagnostic(`low waited ${lowStarted - lowQueuedAt} ms; ${waiting.length} normal jobs still queued`);
    assert.ok(waiting.length > 0, 'it jumped normal-priority jobs submitted before it started');
    for (const id of [low, ...stream])
      await waitFor(`job ${id} done`, async () => (await jobOf(c, t, id)).status === 'succeeded');
  },
);
