import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let a: TestTenant;
let b: TestTenant;
let jobId: string;
let checkpointId: string;

before(async () => {
  h = await startHarness();
  a = await h.createTenant('tenant-a');
  b = await h.createTenant('tenant-b');
  jobId = (
    await a
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'secret', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id;
  const bytes = Buffer.from('tenant a weights');
  const key = `jobs/${jobId}/step-1.safetensors`;
  mkdirSync(path.dirname(path.join(h.config.TIMESHARE_STORAGE_ROOT, key)), { recursive: true });
  writeFileSync(path.join(h.config.TIMESHARE_STORAGE_ROOT, key), bytes);
  const ck = await h.api.deps.db.prisma.checkpoint.create({
    data: {
      jobId,
      step: 1,
      sizeBytes: BigInt(bytes.length),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      storageKey: key,
    },
  });
  checkpointId = ck.id;
  await h.api.deps.db.prisma.metric.create({ data: { jobId, step: 1, name: 'reward_mean', value: 0.5 } });
});
after(() => h.close());

test("tenant B gets 404 for everything of tenant A's job, exactly as for a job that does not exist", async () => {
  const ghost = '00000000-0000-4000-8000-000000000000';
  const paths = (id: string) => [
    ['get', `/v1/jobs/${id}`],
    ['get', `/v1/jobs/${id}/events`],
    ['get', `/v1/jobs/${id}/metrics`],
    ['get', `/v1/jobs/${id}/checkpoints`],
    ['get', `/v1/jobs/${id}/checkpoints/${checkpointId}/content`],
    ['post', `/v1/jobs/${id}/cancel`],
  ];
  for (const [method, p] of paths(jobId)) {
    const res = await b.as(h.http[method as 'get'](p!)).expect(404);
    const ghostRes = await b.as(h.http[method as 'get'](p!.replace(jobId, ghost))).expect(404);
    assert.deepEqual(res.body, ghostRes.body, `${method} ${p} must not leak existence`);
  }
  const sse = await b
    .as(h.http.get(`/v1/jobs/${jobId}/events`))
    .set('Accept', 'text/event-stream')
    .expect(404);
  assert.equal(sse.body.error.code, 'not_found');
  const list = await b.as(h.http.get('/v1/jobs')).expect(200);
  assert.equal(list.body.data.length, 0);
  // ...while tenant A sees all of it, and the job is untouched.
  await a.as(h.http.get(`/v1/jobs/${jobId}/checkpoints/${checkpointId}/content`)).expect(200);
  const job = await a.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200);
  assert.equal(job.body.status, 'queued');
  const metrics = await a.as(h.http.get(`/v1/jobs/${jobId}/metrics`)).expect(200);
  assert.equal(metrics.body.data.length, 1);
});

test("a checkpoint id of A's job is not reachable through B's own job either", async () => {
  const bJob = (
    await b
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'mine', workflow: { task: { name: 'sorting' } } })
      .expect(201)
  ).body.id;
  await b.as(h.http.get(`/v1/jobs/${bJob}/checkpoints/${checkpointId}/content`)).expect(404);
});

test("usage counts only the caller's jobs", async () => {
  const ua = await a.as(h.http.get('/v1/usage')).expect(200);
  const ub = await b.as(h.http.get('/v1/usage')).expect(200);
  assert.equal(ua.body.activeJobs, 1);
  assert.equal(ua.body.queuedJobs, 1);
  assert.equal(ub.body.activeJobs, 1);
  assert.equal(ua.body.remaining.activeJobs, 19);
});
