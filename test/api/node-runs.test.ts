/**
 * Node reports are fenced by run, not only by node: each names the run it belongs to (`queueSeq`,
 * the job's queue_seq in the assignment that started it). A job requeued and placed again on the
 * same node is a new run there, and a late report of the earlier run (start, metrics and profiles,
 * device-seconds, a checkpoint, an outcome) answers `{applied: false}` and changes nothing: it
 * cannot requeue or finish the new run, nor charge its tenant. Within a run, reports are numbered
 * (`reportSeq`) and applied at most once: a resend of one the API committed but whose answer was
 * lost answers as applied and changes nothing (no second checkpoint event, no device-seconds twice).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { requeueJob } from '../../common/jobs/transitions.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let acme: TestTenant;
let node: TestNode['as'];
let nodeId: string;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  ({ as: node, id: nodeId } = await registerTestNode(h, 'runs-node'));
});
after(() => h.close());

const place = (jobId: string) => placeOnNode(h, nodeId, jobId);

/** A queued addition job of acme's, with `extra` in its spec. */
const submit = async (name: string, extra: object = {}) =>
  (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name, workflow: { task: { name: 'addition' } }, ...extra })
      .expect(201)
  ).body.id as string;

const post = (jobId: string, what: string, body: object) =>
  node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/${what}`))
    .send(body)
    .expect(200);

const hold = { stage: 'rl_step', step: 7, seconds: 5, devices: 1, computeSeconds: 5 };
const checkpoint = (step: number) => ({ step, sizeBytes: 10, sha256: 'b'.repeat(64), meta: {} });

/** Everything a report can change, for the job and its tenant. */
async function state(jobId: string) {
  const pool = h.api.deps.db.pool;
  const one = async (sql: string) => (await pool.query(sql, [jobId])).rows[0];
  return {
    job: await one(
      `SELECT status, queue_seq, node_id, attempts, preemptions, device_seconds, last_error, placement
         FROM jobs WHERE id = $1`,
    ),
    metrics: await one(`SELECT count(*)::int AS n FROM metrics WHERE job_id = $1`),
    profiles: await one(`SELECT count(*)::int AS n FROM stage_profiles WHERE job_id = $1`),
    checkpoints: await one(`SELECT count(*)::int AS n, max(step) AS step FROM checkpoints WHERE job_id = $1`),
    events: await one(`SELECT count(*)::int AS n FROM job_events WHERE job_id = $1`),
    ledger: await one(
      `SELECT coalesce(sum(device_seconds), 0)::float8 AS s FROM usage_ledger WHERE job_id = $1`,
    ),
    quota: await one(
      `SELECT q.active_jobs, q.active_devices, q.period_device_seconds
         FROM quotas q JOIN jobs j ON j.tenant_id = q.tenant_id WHERE j.id = $1`,
    ),
  };
}

test("a late report of a job's earlier run on the same node is refused and changes nothing", async () => {
  const jobId = await submit('twice-here');

  // Run 1 starts, reports, and is preempted back to the queue.
  const first = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: first })).body.applied, true);
  const report = { metrics: [{ step: 1, name: 'loss', value: 1 }], profiles: [hold], deviceSeconds: 5 };
  assert.equal(
    (await post(jobId, 'report', { queueSeq: first, reportSeq: 1, ...report })).body.applied,
    true,
  );
  assert.equal((await post(jobId, 'finish', { queueSeq: first, outcome: 'preempted' })).body.applied, true);

  // Run 2 is placed on the same node and starts.
  const second = await place(jobId);
  assert.equal(second, first + 1, 'a requeue starts a new run');
  assert.equal((await post(jobId, 'start', { queueSeq: second })).body.applied, true);
  const before = await state(jobId);

  // What run 1 still had in flight arrives now: each is refused.
  const late = { queueSeq: first };
  const answers = [
    (await post(jobId, 'start', late)).body,
    (
      await post(jobId, 'report', {
        ...late,
        reportSeq: 2,
        metrics: [{ step: 9, name: 'loss', value: 9 }],
        profiles: [hold],
        deviceSeconds: 5,
      })
    ).body,
    (await post(jobId, 'report', { ...late, reportSeq: 3, deviceSeconds: 5 })).body,
    (await post(jobId, 'checkpoints', { ...late, reportSeq: 4, ...checkpoint(9) })).body,
    (await post(jobId, 'finish', { ...late, outcome: 'crashed', error: 'run 1 died late' })).body,
    (await post(jobId, 'finish', { ...late, outcome: 'succeeded' })).body,
  ];
  assert.deepEqual(answers, [
    { applied: false },
    { applied: false },
    { applied: false },
    { applied: false, checkpointId: null },
    { applied: false },
    { applied: false },
  ]);
  assert.deepEqual(await state(jobId), before, 'nothing about the job or its tenant changed');
  assert.equal(before.job.status, 'running');

  // Run 2's own reports still apply.
  assert.equal(
    (await post(jobId, 'checkpoints', { queueSeq: second, reportSeq: 1, ...checkpoint(2) })).body.applied,
    true,
  );
  assert.equal((await post(jobId, 'finish', { queueSeq: second, outcome: 'succeeded' })).body.applied, true);
  assert.equal((await state(jobId)).job.status, 'succeeded');
});

test('a report or checkpoint record sent again is applied once', async () => {
  const jobId = await submit('resent');
  const run = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: run })).body.applied, true);
  const measured = {
    type: 'job.rebalance_measured',
    step: 1,
    split: { generate: 1, train: 1 },
    stepSecondsBefore: 1,
    stepSecondsAfter: 1,
    imbalance: 0,
  };
  const r1 = {
    queueSeq: run,
    reportSeq: 1,
    metrics: [{ step: 1, name: 'loss', value: 1 }],
    profiles: [hold],
    events: [measured],
    deviceSeconds: 5,
  };
  const c2 = { queueSeq: run, reportSeq: 2, ...checkpoint(3) };

  assert.equal((await post(jobId, 'report', r1)).body.applied, true);
  const once = await state(jobId);
  // The outbox sends it again: the API's answer was lost.
  assert.equal((await post(jobId, 'report', r1)).body.applied, true);
  assert.deepEqual(await state(jobId), once, 'a resent report changes nothing');
  assert.equal(once.job.device_seconds, 5);

  const first = (await post(jobId, 'checkpoints', c2)).body;
  assert.equal(first.applied, true);
  const recorded = await state(jobId);
  assert.deepEqual((await post(jobId, 'checkpoints', c2)).body, first, 'answered with the same record');
  // A first send still in flight when its resend was applied, arriving after a later report.
  assert.equal((await post(jobId, 'report', r1)).body.applied, true);
  assert.deepEqual(await state(jobId), recorded, 'one job.checkpoint event, nothing charged twice');

  // Sent twice at once (a first send the node gave up on, still being applied): once.
  const r3 = { ...r1, reportSeq: 3, events: [], metrics: [] };
  const both = await Promise.all([post(jobId, 'report', r3), post(jobId, 'report', r3)]);
  assert.deepEqual(
    both.map((r) => r.body),
    [{ applied: true }, { applied: true }],
  );
  const after = await state(jobId);
  assert.equal(after.job.device_seconds, 10);
  assert.equal(after.ledger.s, 10);
  assert.equal(after.quota.period_device_seconds - once.quota.period_device_seconds, 5);
  assert.equal(after.profiles.n, 2);
  assert.equal(after.events.n, recorded.events.n);
});

test('a late lost_contact for a run requeued as node_lost gives the job its attempt back, once', async () => {
  const jobId = await submit('outlived', { maxAttempts: 2 });
  const pool = h.api.deps.db.pool;
  const first = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: first })).body.applied, true);
  // The API was out of the node's reach past the node timeout: the liveness sweep requeues the run.
  assert.ok(await requeueJob(pool, jobId, nodeId, null, 'node_lost', 'node runs-node stopped heartbeating'));
  const second = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: second })).body.applied, true);
  const counts = async () =>
    (await pool.query('SELECT attempts, interruptions, queue_seq FROM jobs WHERE id = $1', [jobId])).rows[0];
  assert.deepEqual(await counts(), { attempts: 2, interruptions: 0, queue_seq: second });

  // Back in touch, the node delivers run 1's outcome: its job had stopped itself.
  const lapsed = { queueSeq: first, outcome: 'lost_contact', error: 'daemon silent for 1500 ms' };
  assert.equal((await post(jobId, 'finish', lapsed)).body.applied, true);
  assert.deepEqual(await counts(), { attempts: 2, interruptions: 1, queue_seq: second }, 'run 2 goes on');
  // What the tenant reads: 2 runs, 1 of them counting toward its 2 (a user read "attempts 5/3" for
  // a job preempted four times and still running).
  const seen = (await acme.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body;
  assert.deepEqual([seen.attempts, seen.countedAttempts, seen.maxAttempts], [2, 1, 2]);
  const refunds = (
    await pool.query(`SELECT data FROM job_events WHERE job_id = $1 AND type = 'job.attempt_refunded'`, [
      jobId,
    ])
  ).rows.map((r) => r.data);
  assert.deepEqual(refunds, [
    { queueSeq: first, nodeId, reason: 'lost_contact', attempts: 2, interruptions: 1, maxAttempts: 2 },
  ]);
  // Sent again (its answer was lost), or at once twice: no second refund.
  const again = await Promise.all([post(jobId, 'finish', lapsed), post(jobId, 'finish', lapsed)]);
  assert.deepEqual(
    again.map((r) => r.body),
    [{ applied: false }, { applied: false }],
  );
  assert.equal((await counts()).interruptions, 1);

  // So run 2's crash is retried: 2 runs, 1 of them interrupted, against maxAttempts 2 (it failed before).
  const crashed = { queueSeq: second, outcome: 'crashed', error: 'boom' };
  assert.equal((await post(jobId, 'finish', crashed)).body.applied, true);
  const after = (await pool.query('SELECT status FROM jobs WHERE id = $1', [jobId])).rows[0];
  assert.equal(after.status, 'queued');
  // A run that did not end node_lost is not refunded, whatever the node says of it afterwards.
  assert.equal((await post(jobId, 'finish', { ...lapsed, queueSeq: second })).body.applied, false);
  assert.equal((await counts()).interruptions, 1);
});

test('a run that succeeded while its node was found lost gives its attempt back; a crash keeps the charge', async () => {
  // A chaos soak: a run ended during an API outage past the node timeout; its late `succeeded`
  // was refused (the run was requeued node_lost) and the requeue's attempt stayed charged.
  const pool = h.api.deps.db.pool;
  const counts = async (jobId: string) =>
    (await pool.query('SELECT status, attempts, interruptions FROM jobs WHERE id = $1', [jobId])).rows[0];
  const lostRun = async (name: string) => {
    const jobId = await submit(name);
    const run = await place(jobId);
    assert.equal((await post(jobId, 'start', { queueSeq: run })).body.applied, true);
    assert.ok(
      await requeueJob(pool, jobId, nodeId, null, 'node_lost', 'node runs-node stopped heartbeating'),
    );
    return { jobId, run };
  };

  // Its next run was placed before the late success arrived (while the job still waits in the
  // queue, the success finishes it: test/api/late-run-reports.test.ts).
  const done = await lostRun('ended-in-outage');
  await place(done.jobId);
  const late = { queueSeq: done.run, outcome: 'succeeded', error: null };
  assert.equal((await post(done.jobId, 'finish', late)).body.applied, true);
  assert.deepEqual(await counts(done.jobId), { status: 'placed', attempts: 1, interruptions: 1 });
  const refund = await pool.query(
    `SELECT data->>'reason' AS reason FROM job_events WHERE job_id = $1 AND type = 'job.attempt_refunded'`,
    [done.jobId],
  );
  assert.deepEqual(refund.rows, [{ reason: 'succeeded' }]);

  for (const outcome of ['crashed', 'failed']) {
    const own = await lostRun(`own-fault-${outcome}`);
    const body = { queueSeq: own.run, outcome, error: 'its own fault' };
    assert.equal((await post(own.jobId, 'finish', body)).body.applied, false);
    assert.deepEqual(await counts(own.jobId), { status: 'queued', attempts: 1, interruptions: 0 });
  }
});

test('a run interrupted before it started gives back no attempt: interruptions never outgrow attempts', async () => {
  // Found by the chaos soak (npm run chaos, seed 101): a daemon paused past the node timeout right after a
  // placement; the run was requeued node_lost while still placed (no attempt used), and the daemon's
  // late lost_contact for it was refunded anyway: attempts 3, interruptions 4, countedAttempts 0.
  const jobId = await submit('never-started', { maxAttempts: 1 });
  const pool = h.api.deps.db.pool;
  const counts = async () =>
    (await pool.query('SELECT attempts, interruptions FROM jobs WHERE id = $1', [jobId])).rows[0];

  // Placed, lost with its node before its start was reported, then reported lost_contact.
  const first = await place(jobId);
  assert.ok(await requeueJob(pool, jobId, nodeId, null, 'node_lost', 'node runs-node stopped heartbeating'));
  const lapsed = { queueSeq: first, outcome: 'lost_contact', error: 'daemon silent for 1500 ms' };
  assert.equal((await post(jobId, 'finish', lapsed)).body.applied, false, 'nothing to refund');
  assert.deepEqual(await counts(), { attempts: 0, interruptions: 0 });

  // Placed again and stopped (lost_contact, then a preemption) before it started: still nothing used.
  const second = await place(jobId);
  assert.equal((await post(jobId, 'finish', { ...lapsed, queueSeq: second })).body.applied, true);
  const third = await place(jobId);
  assert.equal((await post(jobId, 'finish', { queueSeq: third, outcome: 'preempted' })).body.applied, true);
  assert.deepEqual(await counts(), { attempts: 0, interruptions: 0 });

  // So its one attempt is its one attempt: the first crash of a started run fails it.
  const fourth = await place(jobId);
  assert.equal((await post(jobId, 'start', { queueSeq: fourth })).body.applied, true);
  assert.equal(
    (await post(jobId, 'finish', { queueSeq: fourth, outcome: 'crashed', error: 'boom' })).body.applied,
    true,
  );
  const job = (await acme.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body;
  assert.deepEqual([job.status, job.attempts, job.countedAttempts], ['failed', 1, 1]);
});
