/**
 * Job events a node reports with a job report (the reactive balancer's `job.rebalanced` and
 * `job.rebalance_measured`, common/node-protocol/reports.ts): accepted for a job placed on the
 * reporting node, recorded as job events users read, and a move's stage map recorded in the
 * placement (what the node's next assignment and the scheduler read). A move outside the
 * placement's own devices is a 400; a node the job is not placed on changes nothing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type request from 'supertest';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

type As = (r: request.Test) => request.Test;

let h: Harness;
let acme: TestTenant;
let node: As;
let nodeId: string;
let other: As;
let otherId: string;
let jobId: string;
/** Reports sent so far: each names the next number (its run's, in order). */
let reported = 0;

const devices = [0, 1, 2, 3].map((index) => ({
  index,
  kind: 'cpu-virtual',
  memoryBytes: 1e9,
  freeMemoryBytes: 1e9,
}));

async function mintNodeKey(name: string): Promise<As> {
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name }).expect(201);
  const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
  return (r) => r.set('Authorization', `Bearer ${tok.body.token}`);
}

const rebalanced = (stages: { generate: number[]; train: number[] }) => ({
  type: 'job.rebalanced',
  step: 4,
  from: { generate: 3, train: 1 },
  to: { generate: stages.generate.length, train: stages.train.length },
  stages,
  imbalance: -0.86,
  stepSecondsBefore: 0.49,
  predictedStepSeconds: 0.245,
  moveSeconds: 0.012,
});

async function eventsOf(id: string) {
  const res = await acme.as(h.http.get(`/v1/jobs/${id}/events`)).expect(200);
  return res.body.data as { type: string; data: Record<string, unknown> }[];
}

async function placement(id: string) {
  return (await h.api.deps.db.pool.query('SELECT placement FROM jobs WHERE id = $1', [id])).rows[0].placement;
}

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  node = await mintNodeKey('balancer-node');
  nodeId = (await node(h.http.post('/v1/nodes/register')).send({ name: 'balancer-node', devices })).body.id;
  other = await mintNodeKey('other-node');
  otherId = (await other(h.http.post('/v1/nodes/register')).send({ name: 'other-node', devices })).body.id;
  const res = await acme
    .as(h.http.post('/v1/jobs'))
    .send({
      name: 'spatial',
      resources: { devices: 4 },
      workflow: { mode: 'spatial', task: { name: 'addition' } },
    })
    .expect(201);
  jobId = res.body.id;
  // What the scheduler leader writes when it places the job (no scheduler runs here).
  const pool = h.api.deps.db.pool;
  await pool.query(
    `INSERT INTO scheduler_leases (name, holder, epoch, expires_at)
     VALUES ('scheduler', 'node-events-test', 1, now() + interval '1 hour') ON CONFLICT (name) DO NOTHING`,
  );
  await pool.query(
    `UPDATE jobs SET status = 'placed', node_id = $2, sched_epoch = 1, placed_at = now(), placement = $3::jsonb
      WHERE id = $1`,
    [
      jobId,
      nodeId,
      JSON.stringify({
        nodeId,
        devices: [0, 1, 2, 3],
        mode: 'spatial',
        stages: { generate: [0, 1, 2], train: [3] },
        microBatches: 2,
        threadsPerDevice: 1,
        memoryBytes: 1e9,
      }),
    ],
  );
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/start`))
    .send({ queueSeq: 0 })
    .expect(200);
});
after(() => h.close());

test('a move outside the placement, or overlapping, is a 400 and writes nothing', async () => {
  for (const stages of [
    { generate: [0, 1], train: [2, 3, 4] },
    { generate: [0, 1, 2], train: [2, 3] },
    { generate: [0], train: [2, 3] },
  ]) {
    const res = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
      .send({
        queueSeq: 0,
        reportSeq: ++reported,
        metrics: [{ step: 4, name: 'loss', value: 1 }],
        events: [rebalanced(stages)],
      })
      .expect(400);
    assert.equal(res.body.error.code, 'invalid_request');
  }
  assert.ok(!(await eventsOf(jobId)).some((e) => e.type === 'job.rebalanced'));
  assert.deepEqual((await placement(jobId)).stages, { generate: [0, 1, 2], train: [3] });
});

test('a node the job is not placed on changes nothing', async () => {
  const res = await other(h.http.post(`/v1/nodes/${otherId}/jobs/${jobId}/report`))
    .send({ queueSeq: 0, reportSeq: ++reported, events: [rebalanced({ generate: [0, 1], train: [2, 3] })] })
    .expect(200);
  assert.equal(res.body.applied, false);
  assert.ok(!(await eventsOf(jobId)).some((e) => e.type === 'job.rebalanced'));
});

test('job.rebalanced is recorded as a job event and its stage map in the placement', async () => {
  const res = await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
    .send({ queueSeq: 0, reportSeq: ++reported, events: [rebalanced({ generate: [0, 1], train: [2, 3] })] })
    .expect(200);
  assert.equal(res.body.applied, true);
  const ev = (await eventsOf(jobId)).find((e) => e.type === 'job.rebalanced')!;
  assert.deepEqual(ev.data.from, { generate: 3, train: 1 });
  assert.deepEqual(ev.data.to, { generate: 2, train: 2 });
  assert.equal(ev.data.moveSeconds, 0.012);
  assert.deepEqual((await placement(jobId)).stages, { generate: [0, 1], train: [2, 3] });
  const assigned = await node(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(200);
  const a = (assigned.body.data as { jobId: string; placement: { stages: unknown } }[]).find(
    (x) => x.jobId === jobId,
  )!;
  assert.deepEqual(a.placement.stages, { generate: [0, 1], train: [2, 3] });

  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
    .send({
      queueSeq: 0,
      reportSeq: ++reported,
      events: [
        {
          type: 'job.rebalance_measured',
          step: 8,
          split: { generate: 2, train: 2 },
          stepSecondsBefore: 0.49,
          stepSecondsAfter: 0.25,
          imbalance: -0.6,
        },
      ],
    })
    .expect(200);
  const measured = (await eventsOf(jobId)).find((e) => e.type === 'job.rebalance_measured')!;
  assert.equal(measured.data.stepSecondsAfter, 0.25);
});

test('an unknown event type is a 400', async () => {
  await node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/report`))
    .send({ queueSeq: 0, reportSeq: ++reported, events: [{ type: 'job.succeeded', step: 1 }] })
    .expect(400);
});
