/**
 * A control-plane outage past the node timeout (a QA pass stopped PostgreSQL for 25 s under load).
 * The liveness sweep does not count the outage as the nodes' silence: the first sweep after the
 * database is back marked every live node lost. And what a requeued run's daemon had in its outbox
 * still counts while the job waits for its next run: its durable checkpoints are recorded (the job
 * resumes from the newest), its success finishes the job; once the next run is placed, they are
 * ignored as before (its history diverged).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { requeueJob } from '../../common/jobs/transitions.js';
import { checkpointDirKey } from '../../common/storage/index.js';
import { sweepLostNodes } from '../../scheduler/liveness.js';
import { ControlPlaneClock } from '../../scheduler/liveness-clock.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { apiPresentFor } from '../helpers/api-presence.js';
import { placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let acme: TestTenant;
let node: TestNode['as'];
let nodeId: string;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  ({ as: node, id: nodeId } = await registerTestNode(h, 'late-node'));
});
after(() => h.close());

const pool = () => h.api.deps.db.pool;
const submit = async (name: string) =>
  (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
const post = (jobId: string, what: string, body: object) =>
  node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/${what}`))
    .send(body)
    .expect(200);
const job = async (jobId: string) =>
  (
    await pool().query(
      `SELECT status, queue_seq, attempts, interruptions, finish_reason FROM jobs WHERE id = $1`,
      [jobId],
    )
  ).rows[0];
const eventsOf = async (jobId: string, type: string) =>
  (
    await pool().query(`SELECT data FROM job_events WHERE job_id = $1 AND type = $2 ORDER BY id`, [
      jobId,
      type,
    ])
  ).rows.map((r) => r.data);

/** Makes step `step` of `jobId` durable in the store, as a job process does before its record. */
async function saveCheckpoint(jobId: string, step: number) {
  const { storage } = h.api.deps;
  const dir = await storage.scratchDir(jobId, step);
  await writeFile(path.join(dir, 'model.safetensors'), 'weights');
  await storage.putDir(dir, checkpointDirKey(jobId, step));
}
const record = (queueSeq: number, reportSeq: number, step: number) => ({
  queueSeq,
  reportSeq,
  step,
  sizeBytes: 7,
  sha256: 'c'.repeat(64),
  meta: {},
});

/** A run of a fresh job started on the node, its checkpoint of step 400 recorded, then lost with the node. */
async function lostRun(name: string) {
  const jobId = await submit(name);
  const run = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: run, resumedFromStep: null })).body.applied, true);
  await saveCheckpoint(jobId, 400);
  assert.equal((await post(jobId, 'checkpoints', record(run, 1, 400))).body.applied, true);
  assert.ok(
    await requeueJob(pool(), jobId, nodeId, null, 'node_lost', 'node late-node stopped heartbeating'),
  );
  return { jobId, run };
}
const place = (jobId: string) => placeOnNode(h, nodeId, jobId);
const resumesFrom = async (jobId: string) =>
  (await pool().query(`SELECT max(step) AS step FROM checkpoints WHERE job_id = $1`, [jobId])).rows[0].step;

test('the sweep after a database outage counts no node silent for the outage', async () => {
  const timeoutMs = 1500;
  const other = await registerTestNode(h, 'dead-node');
  const heartbeat = () =>
    node(h.http.post(`/v1/nodes/${nodeId}/heartbeat`))
      .send({ devices: [] })
      .expect(204);
  const clock = new ControlPlaneClock();
  // A scheduler that has been sweeping for a minute, and an API up as long.
  clock.reached(new Date(Date.now() - 60_000));
  await apiPresentFor(pool(), 60_000);
  const deps = { ...h.api.deps, pool: pool(), timeoutMs, clock };
  // The database went away: no heartbeat was taken, and the sweep's own statements fail.
  const down = {
    query: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
  } as unknown as pg.Pool;
  await assert.rejects(sweepLostNodes({ ...deps, pool: down }), /ECONNREFUSED/);
  await pool().query(
    `UPDATE nodes SET last_heartbeat_at = now() - interval '25 seconds', status = 'ready' WHERE id = ANY($1)`,
    [[nodeId, other.id]],
  );
  const jobId = await submit('through-outage');
  const run = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: run, resumedFromStep: null })).body.applied, true);
  await pool().query(`UPDATE nodes SET last_heartbeat_at = now() - interval '25 seconds' WHERE id = $1`, [
    nodeId,
  ]);

  // Back: every node's last heartbeat is 25 s old, but the control plane took none of them.
  assert.equal(await sweepLostNodes(deps), 0);
  const status = async (id: string) =>
    (await pool().query(`SELECT status FROM nodes WHERE id = $1`, [id])).rows[0].status as string;
  assert.deepEqual([await status(nodeId), await status(other.id)], ['ready', 'ready']);
  // The live node's heartbeats resume within the timeout; the dead one's do not.
  await heartbeat();
  await new Promise((r) => setTimeout(r, 800));
  await heartbeat();
  assert.equal(await sweepLostNodes(deps), 0);
  assert.equal(await status(nodeId), 'ready');
  await new Promise((r) => setTimeout(r, timeoutMs - 800 + 200));
  await heartbeat();
  assert.equal(await sweepLostNodes(deps), 0, 'the job on the live node stays where it is');
  assert.deepEqual([await status(nodeId), await status(other.id)], ['ready', 'lost']);
  assert.equal((await job(jobId)).status, 'running');
  await post(jobId, 'finish', { queueSeq: run, outcome: 'preempted' });
});

test('a checkpoint of a run requeued node_lost, arriving before its next run is placed, is recorded', async () => {
  const { jobId, run } = await lostRun('late-checkpoints');
  assert.equal((await job(jobId)).status, 'queued');
  // The outbox delivers the records the outage held back.
  for (const [i, step] of [425, 450, 475].entries()) {
    await saveCheckpoint(jobId, step);
    const ans = (await post(jobId, 'checkpoints', record(run, 2 + i, step))).body;
    assert.equal(ans.applied, true, `step ${step}`);
    assert.ok(ans.checkpointId);
  }
  assert.equal(await resumesFrom(jobId), 475);
  const late = (await eventsOf(jobId, 'job.checkpoint')).slice(1);
  assert.deepEqual(
    late.map((e) => [e.step, e.late, e.queueSeq, e.nodeId]),
    [425, 450, 475].map((s) => [s, true, run, nodeId]),
  );
  // A resend (its answer lost) answers as applied and records nothing more.
  const again = (await post(jobId, 'checkpoints', record(run, 4, 475))).body;
  assert.equal(again.applied, true);
  assert.equal((await eventsOf(jobId, 'job.checkpoint')).length, 4);
  // A record whose file is not in storage is not taken.
  assert.equal((await post(jobId, 'checkpoints', record(run, 5, 500))).body.applied, false);
  assert.equal(await resumesFrom(jobId), 475);

  // The next run resumes from it, and its own records number afresh.
  const next = await place(jobId);
  const assigned = (await node(h.http.get(`/v1/nodes/${nodeId}/assignments`)).expect(200)).body.data;
  assert.equal(assigned.find((a: { jobId: string }) => a.jobId === jobId).resumeFrom.step, 475);
  assert.equal((await post(jobId, 'start', { queueSeq: next, resumedFromStep: 475 })).body.applied, true);
  await saveCheckpoint(jobId, 500);
  assert.equal((await post(jobId, 'checkpoints', record(next, 1, 500))).body.applied, true);
  await post(jobId, 'finish', { queueSeq: next, outcome: 'preempted' });
});

test('a late success of a run requeued node_lost finishes the job while it waits in the queue', async () => {
  const { jobId, run } = await lostRun('late-success');
  const active = async () =>
    (
      await pool().query(
        `SELECT q.active_jobs FROM quotas q JOIN jobs j ON j.tenant_id = q.tenant_id WHERE j.id = $1`,
        [jobId],
      )
    ).rows[0].active_jobs as number;
  const activeBefore = await active();
  const done = { queueSeq: run, outcome: 'succeeded', error: null, reason: 'steps_completed' };
  assert.equal((await post(jobId, 'finish', done)).body.applied, true);
  assert.deepEqual(await job(jobId), {
    status: 'succeeded',
    queue_seq: run + 1,
    attempts: 1,
    interruptions: 0,
    finish_reason: 'steps_completed',
  });
  assert.equal(await active(), activeBefore - 1);
  assert.deepEqual(await eventsOf(jobId, 'job.succeeded'), [
    { status: 'succeeded', error: null, reason: 'steps_completed', late: true, queueSeq: run, nodeId },
  ]);
  assert.deepEqual(await eventsOf(jobId, 'job.attempt_refunded'), []);
  // Sent again: nothing more.
  assert.equal((await post(jobId, 'finish', done)).body.applied, false);
  assert.equal((await eventsOf(jobId, 'job.succeeded')).length, 1);
  const seen = (await acme.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body;
  assert.equal(seen.status, 'succeeded');
});

test("once the job's next run is placed, late reports of the run before are ignored", async () => {
  const { jobId, run } = await lostRun('diverged');
  const next = await place(jobId);
  await saveCheckpoint(jobId, 425);
  assert.deepEqual((await post(jobId, 'checkpoints', record(run, 2, 425))).body, {
    applied: false,
    checkpointId: null,
  });
  assert.equal(await resumesFrom(jobId), 400);
  // Its success only gives back the attempt the node_lost requeue used; the placed run goes on.
  const done = { queueSeq: run, outcome: 'succeeded', error: null };
  assert.equal((await post(jobId, 'finish', done)).body.applied, true);
  assert.equal((await job(jobId)).status, 'placed');
  assert.deepEqual(await eventsOf(jobId, 'job.succeeded'), []);
  assert.equal((await eventsOf(jobId, 'job.attempt_refunded')).length, 1);

  // Nor after it went back to the queue again: run + 2 is not the run after `run`.
  assert.equal((await post(jobId, 'finish', { queueSeq: next, outcome: 'preempted' })).body.applied, true);
  assert.equal((await job(jobId)).status, 'queued');
  assert.equal((await post(jobId, 'checkpoints', record(run, 3, 425))).body.applied, false);
  assert.equal((await post(jobId, 'finish', done)).body.applied, false);
  assert.equal((await job(jobId)).status, 'queued');
  assert.equal(await resumesFrom(jobId), 400);

  // A run that was not requeued node_lost (preempted, the node's own report) takes no late record.
  const p = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: p, resumedFromStep: 400 })).body.applied, true);
  assert.equal((await post(jobId, 'finish', { queueSeq: p, outcome: 'preempted' })).body.applied, true);
  await saveCheckpoint(jobId, 450);
  assert.equal((await post(jobId, 'checkpoints', record(p, 1, 450))).body.applied, false);
  assert.equal(
    (await post(jobId, 'finish', { queueSeq: p, outcome: 'succeeded', error: null })).body.applied,
    false,
  );
  assert.equal((await job(jobId)).status, 'queued');
});

test('late metrics of a run requeued node_lost are stored, and its device-seconds charged, until its next run is placed', async () => {
  const { jobId, run } = await lostRun('late-metrics');
  // The lost run was placed an hour before its requeue: its device time is bounded by that.
  await pool().query(`UPDATE jobs SET placed_at = queued_at - interval '1 hour' WHERE id = $1`, [jobId]);
  const usage = async () =>
    (
      await pool().query(
        `SELECT j.device_seconds::float8 AS job, q.period_device_seconds::float8 AS tenant,
                (SELECT coalesce(sum(device_seconds), 0)::float8 FROM usage_ledger WHERE job_id = j.id) AS ledger
           FROM jobs j JOIN quotas q ON q.tenant_id = j.tenant_id WHERE j.id = $1`,
        [jobId],
      )
    ).rows[0] as { job: number; tenant: number; ledger: number };
  const metrics = async () =>
    (
      (await acme.as(h.http.get(`/v1/jobs/${jobId}/metrics`)).expect(200)).body.data as {
        step: number;
        name: string;
        value: number;
      }[]
    ).map((p) => [p.step, p.value]);
  const before = await usage();
  // The outbox delivers what the outage held back: steps 401–600 (its checkpoint of step 600 too).
  const points = (from: number, to: number) =>
    Array.from({ length: (to - from) / 50 + 1 }, (_, i) => ({ step: from + 50 * i, name: 'loss', value: 1 }));
  const report = (reportSeq: number, from: number, to: number) => ({
    queueSeq: run,
    reportSeq,
    metrics: points(from, to),
    deviceSeconds: 7,
  });
  assert.equal((await post(jobId, 'report', report(2, 450, 500))).body.applied, true);
  await saveCheckpoint(jobId, 600);
  assert.equal((await post(jobId, 'checkpoints', record(run, 3, 600))).body.applied, true);
  assert.equal((await post(jobId, 'report', report(4, 550, 600))).body.applied, true);
  assert.deepEqual(await metrics(), [
    [450, 1],
    [500, 1],
    [550, 1],
    [600, 1],
  ]);
  const after = await usage();
  assert.deepEqual(
    [after.job - before.job, after.tenant - before.tenant, after.ledger - before.ledger],
    [14, 14, 14],
    'the late run used those device-seconds',
  );
  // A resend (its answer lost) is applied once.
  assert.equal((await post(jobId, 'report', report(4, 550, 600))).body.applied, true);
  assert.equal((await usage()).job, after.job);
  assert.equal(await resumesFrom(jobId), 600);

  // Its next run is placed: what the late run still sends is ignored.
  const next = await place(jobId);
  const stale = { ...report(5, 650, 650), metrics: [{ step: 650, name: 'loss', value: 9 }] };
  assert.equal((await post(jobId, 'report', stale)).body.applied, false);
  assert.equal((await metrics()).length, 4);
  assert.equal((await usage()).job, after.job);
  await post(jobId, 'finish', { queueSeq: next, outcome: 'preempted' });
  // Nor a run older than the one before.
  assert.equal((await post(jobId, 'report', { ...stale, reportSeq: 6 })).body.applied, false);
  assert.equal((await metrics()).length, 4);
});
