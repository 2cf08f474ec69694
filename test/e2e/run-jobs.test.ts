/**
 * The product's main path, end to end on one machine: API + scheduler + two worker daemons with
 * two virtual devices each + the real engine. Three jobs of two tenants, submitted over REST, all
 * succeed, each with metrics and at least two checkpoints whose content matches its sha256.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startCluster, waitFor, type Cluster } from '../helpers/cluster.js';
import type { TestTenant } from '../helpers/api-harness.js';

let c: Cluster;
before(async () => {
  c = await startCluster();
  await Promise.all([c.startWorker('node-a', 2), c.startWorker('node-b', 2)]);
});
after(() => c.close());

export const smallJob = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  workflow: {
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    steps: 4,
    promptsPerStep: 16,
    groupSize: 4,
    checkpointEvery: 2,
    evalEvery: 2,
    warmup: { maxSteps: 40, targetAccuracy: 0.2 },
    ...extra,
  },
});

async function finished(t: TestTenant, id: string) {
  return waitFor(`job ${id} to finish`, async () => {
    const j = await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200);
    return ['succeeded', 'failed', 'cancelled'].includes(j.body.status) ? j.body : null;
  });
}

test(
  'three jobs of two tenants run to success with metrics and verified checkpoints',
  { timeout: 300_000 },
  async () => {
    const a = await c.h.createTenant('e2e-a');
    const b = await c.h.createTenant('e2e-b');
    const submitted = [
      {
        t: a,
        id: (await a.as(c.h.http.post('/v1/jobs')).send(smallJob('a1')).expect(201)).body.id as string,
      },
      {
        t: a,
        id: (await a.as(c.h.http.post('/v1/jobs')).send(smallJob('a2')).expect(201)).body.id as string,
      },
      {
        t: b,
        id: (await b.as(c.h.http.post('/v1/jobs')).send(smallJob('b1')).expect(201)).body.id as string,
      },
    ];
    for (const { t, id } of submitted) {
      const job = await finished(t, id);
      assert.equal(job.status, 'succeeded', `job ${id}: ${job.error}`);
      assert.equal(job.attempts, 1);
      assert.ok(job.deviceSeconds > 0);
      const metrics = await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200);
      assert.deepEqual(
        metrics.body.data.map((m: { step: number }) => m.step),
        [1, 2, 3, 4],
      );
      const acc = await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=eval_accuracy`)).expect(200);
      assert.equal(acc.body.data.length, 2);
      const cks = await t.as(c.h.http.get(`/v1/jobs/${id}/checkpoints`)).expect(200);
      assert.deepEqual(
        cks.body.data.map((k: { step: number }) => k.step),
        [2, 4],
      );
      for (const ck of cks.body.data) {
        const content = await t
          .as(c.h.http.get(`/v1/jobs/${id}/checkpoints/${ck.id}/content`))
          .buffer(true)
          .parse((res, cb) => {
            const chunks: Buffer[] = [];
            res.on('data', (d: Buffer) => chunks.push(d));
            res.on('end', () => cb(null, Buffer.concat(chunks)));
          })
          .expect(200);
        assert.equal(createHash('sha256').update(content.body).digest('hex'), ck.sha256);
        assert.equal(content.body.length, ck.sizeBytes);
        // A safetensors file: 8-byte header length, then a JSON header naming tensors.
        const headerLen = Number(content.body.readBigUInt64LE(0));
        const header = JSON.parse(content.body.subarray(8, 8 + headerLen).toString('utf8'));
        assert.ok(Object.keys(header).some((k) => k.endsWith('.weight')));
      }
      const events = await t.as(c.h.http.get(`/v1/jobs/${id}/events?limit=1000`)).expect(200);
      const types = events.body.data.map((e: { type: string }) => e.type);
      // The planner's fitted prediction is recorded once if a round saw 5 profiled steps.
      assert.ok(types.filter((x: string) => x === 'job.plan_fitted').length <= 1);
      assert.deepEqual(
        types.filter((x: string) => x !== 'job.checkpoint' && x !== 'job.plan_fitted'),
        ['job.queued', 'job.admitted', 'job.placed', 'job.running', 'job.succeeded'],
      );
    }
    // Tenants see only their own jobs.
    const listB = await b.as(c.h.http.get('/v1/jobs')).expect(200);
    assert.equal(listB.body.data.length, 1);
    const usage = await a.as(c.h.http.get('/v1/usage')).expect(200);
    assert.equal(usage.body.activeJobs, 0);
    assert.ok(usage.body.deviceSecondsUsed > 0);
    // Metered from the real holds: the engine computed and switched, and the states add up.
    const s = usage.body.deviceSecondsByState;
    assert.ok(s.running > 0 && s.switching > 0 && s.idle >= 0, JSON.stringify(s));
    assert.ok(Math.abs(s.running + s.switching + s.idle - usage.body.deviceSecondsUsed) < 1e-6);
    assert.equal(usage.body.jobs.length, 2, "its own two jobs, not the other tenant's");
    const listed = usage.body.jobs.reduce(
      (n: number, j: { deviceSeconds: number }) => n + j.deviceSeconds,
      0,
    );
    assert.ok(Math.abs(listed - usage.body.deviceSecondsUsed) < 1e-6, 'the jobs add up to the tenant');
  },
);

test(
  'a job over the tenant’s concurrent-device quota waits with waitReason "quota", then runs',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('e2e-quota', { maxConcurrentDevices: 1 });
    const first = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send(smallJob('q1', { steps: 40 }))
        .expect(201)
    ).body.id as string;
    const second = (await t.as(c.h.http.post('/v1/jobs')).send(smallJob('q2')).expect(201)).body.id as string;
    // The reason is written with the round's decisions, its queue view (position, estimate) to
    // Redis right after the commit: a read between the two sees the reason without the position.
    const waiting = await waitFor('the second job to wait on quota', async () => {
      const j = (await t.as(c.h.http.get(`/v1/jobs/${second}`)).expect(200)).body;
      return j.status === 'queued' && j.waitReason === 'quota' && j.queuePosition !== null ? j : null;
    });
    assert.equal(waiting.queuePosition, 1);
    for (const id of [first, second]) {
      const j = await finished(t, id);
      assert.equal(j.status, 'succeeded', j.error);
    }
  },
);
