/**
 * `workflow.keepCheckpoints` through the node protocol, with the API's real local store: a node's
 * checkpoint record retires the job's checkpoints beyond its newest N (records at once, files by the
 * API's sweep), keeps one another job starts from, and a deletion a crash left half-done is finished
 * by the next sweep. A submission naming a checkpoint as it is retired: whichever locks the row
 * first, the other sees it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkpointDirKey, checkpointModelKey } from '../../common/storage/index.js';
import { sweepRetiredCheckpoints } from '../../common/jobs/checkpoint-retention.js';
import { jobSpecSchema } from '../../common/job-spec.js';
import { admissionElement } from '../../api/jobs/admit.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let node: TestNode;
let t: TestTenant;

before(async () => {
  h = await startHarness();
  node = await registerTestNode(h, 'keeper');
  t = await h.createTenant('keeper');
});
after(() => h.close());

const fileOf = (jobId: string, step: number) =>
  path.join(h.config.TIMESHARE_STORAGE_ROOT, checkpointModelKey(jobId, step));
const dirOf = (jobId: string, step: number) =>
  path.join(h.config.TIMESHARE_STORAGE_ROOT, checkpointDirKey(jobId, step));

/** A job of `t`'s placed on the node, and a way to checkpoint it as its worker would. */
async function placedJob(keepCheckpoints?: number) {
  const workflow = { task: { name: 'addition' }, ...(keepCheckpoints ? { keepCheckpoints } : {}) };
  const jobId = (await t.as(h.http.post('/v1/jobs')).send({ name: 'kept', workflow }).expect(201)).body
    .id as string;
  const queueSeq = await placeOnNode(h, node.id, jobId);
  let reportSeq = 0;
  return {
    jobId,
    /** Writes the step's files, records them, and waits for the sweep it started; the record's id. */
    async checkpoint(step: number): Promise<string> {
      mkdirSync(dirOf(jobId, step), { recursive: true });
      writeFileSync(fileOf(jobId, step), `step ${step}`);
      writeFileSync(path.join(dirOf(jobId, step), 'optimizer.bin'), 'state');
      const r = await node
        .as(h.http.post(`/v1/nodes/${node.id}/jobs/${jobId}/checkpoints`))
        .send({ queueSeq, reportSeq: ++reportSeq, step, sizeBytes: 6, sha256: 'a'.repeat(64), meta: {} })
        .expect(200);
      assert.equal(r.body.applied, true);
      await h.api.deps.retiredCheckpoints.kick();
      return r.body.checkpointId as string;
    },
    async steps(): Promise<number[]> {
      const list = await t.as(h.http.get(`/v1/jobs/${jobId}/checkpoints`)).expect(200);
      return (list.body.data as { step: number }[]).map((c) => c.step).sort((a, b) => a - b);
    },
  };
}

const pendingDeletions = async () =>
  (await h.api.deps.db.pool.query(`SELECT count(*)::int AS n FROM checkpoint_deletions`)).rows[0].n as number;

test('a job keeps its newest keepCheckpoints checkpoints: older records and their files go', async () => {
  const job = await placedJob(2);
  const ids = new Map<number, string>();
  for (const step of [2, 4, 6, 8]) ids.set(step, await job.checkpoint(step));
  assert.deepEqual(await job.steps(), [6, 8]);
  for (const step of [2, 4]) assert.equal(existsSync(dirOf(job.jobId, step)), false, `step ${step}'s files`);
  for (const step of [6, 8]) assert.equal(existsSync(fileOf(job.jobId, step)), true, `step ${step}'s file`);
  assert.equal(await pendingDeletions(), 0);
  // A retired checkpoint is gone from the API too.
  const gone = await t.as(h.http.get(`/v1/jobs/${job.jobId}/checkpoints/${ids.get(2)}/content`)).expect(404);
  assert.equal(gone.body.error.code, 'not_found');
});

test('without keepCheckpoints every checkpoint is kept', async () => {
  const job = await placedJob();
  for (const step of [2, 4, 6]) await job.checkpoint(step);
  assert.deepEqual(await job.steps(), [2, 4, 6]);
  for (const step of [2, 4, 6]) assert.equal(existsSync(fileOf(job.jobId, step)), true);
});

test('a checkpoint another job was submitted to start from is kept', async () => {
  const job = await placedJob(1);
  const first = await job.checkpoint(2);
  await t
    .as(h.http.post('/v1/jobs'))
    .send({
      name: 'from-kept',
      initialCheckpoint: { jobId: job.jobId, checkpointId: first },
      workflow: { task: { name: 'addition' } },
    })
    .expect(201);
  await job.checkpoint(4);
  await job.checkpoint(6);
  assert.deepEqual(await job.steps(), [2, 6], 'step 2 kept for the job that starts from it; 4 retired');
  assert.equal(existsSync(fileOf(job.jobId, 2)), true);
  assert.equal(existsSync(dirOf(job.jobId, 4)), false);
});

/** Resolves once a statement of this database waits on a row lock (or `settled` resolves first). */
async function someoneWaitsOnALock(settled: Promise<unknown>): Promise<'waiting' | 'settled'> {
  let done = false;
  void settled.then(
    () => (done = true),
    () => (done = true),
  );
  for (;;) {
    if (done) return 'settled';
    const r = await h.api.deps.db.pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (r.rows[0].n > 0) return 'waiting';
    await new Promise((r) => setTimeout(r, 20));
  }
}

const startingFrom = (jobId: string, checkpointId: string) => ({
  name: 'from-racing',
  initialCheckpoint: { jobId, checkpointId },
  workflow: { task: { name: 'addition' } },
});

test('a checkpoint an admission is naming is skipped by retention, not waited for, and kept once the job is in', async () => {
  const job = await placedJob(1);
  const first = await job.checkpoint(2);
  const admission = await h.api.deps.db.pool.connect();
  try {
    await admission.query('BEGIN');
    const spec = jobSpecSchema.parse(startingFrom(job.jobId, first));
    const admitted = await admission.query(`SELECT * FROM admit_jobs($1::jsonb)`, [
      JSON.stringify([admissionElement(t.id, spec)]),
    ]);
    assert.ok(admitted.rows[0].id, 'admitted');
    // The record of step 4 would retire step 2; the admission holds it and has not committed.
    const recording = job.checkpoint(4);
    assert.equal(await someoneWaitsOnALock(recording), 'settled', 'retention waited on the admission');
    assert.deepEqual(await job.steps(), [2, 4], 'skipped, not deleted under the admission');
    await admission.query('COMMIT');
  } finally {
    admission.release();
  }
  // The job that names it is in: the next record keeps it and retires step 4.
  await job.checkpoint(6);
  assert.deepEqual(await job.steps(), [2, 6]);
  assert.equal(existsSync(fileOf(job.jobId, 2)), true);
});

test('a checkpoint skipped under an admission that then rolls back is retired without another record', async () => {
  const job = await placedJob(1);
  const first = await job.checkpoint(2);
  const admission = await h.api.deps.db.pool.connect();
  try {
    await admission.query('BEGIN');
    const spec = jobSpecSchema.parse(startingFrom(job.jobId, first));
    await admission.query(`SELECT * FROM admit_jobs($1::jsonb)`, [
      JSON.stringify([admissionElement(t.id, spec)]),
    ]);
    // Step 4 is the job's last record: nothing after it would retire step 2.
    await job.checkpoint(4);
    assert.deepEqual(await job.steps(), [2, 4], 'skipped under the admission');
    await admission.query('ROLLBACK');
  } finally {
    admission.release();
  }
  const deadline = Date.now() + 15_000;
  while ((await job.steps()).length > 1 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(await job.steps(), [4], 'the retry retired what the admission no longer names');
  await h.api.deps.retiredCheckpoints.kick();
  assert.equal(existsSync(dirOf(job.jobId, 2)), false, 'and its files went');
});

test('a submission naming a checkpoint retention is deleting waits for it and is refused, writing nothing', async () => {
  const job = await placedJob(1);
  const first = await job.checkpoint(2);
  const { pool } = h.api.deps.db;
  const jobs = async () =>
    (await pool.query(`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1`, [t.id])).rows[0]
      .n as number;
  const before = await jobs();
  const retiring = await pool.connect();
  let submission: Promise<{ status: number; body: { error?: { code: string; param: string } } }>;
  try {
    // Retention's first statement: the rows it will retire, locked.
    await retiring.query('BEGIN');
    await retiring.query(`SELECT id FROM checkpoints WHERE id = $1 FOR UPDATE`, [first]);
    // The API finds the checkpoint (its check does not lock), then admits the job.
    submission = t
      .as(h.http.post('/v1/jobs'))
      .send(startingFrom(job.jobId, first))
      .then((r) => r);
    assert.equal(
      await someoneWaitsOnALock(submission),
      'waiting',
      'the admission did not wait for retention',
    );
    await retiring.query(`DELETE FROM checkpoints WHERE id = $1`, [first]);
    await retiring.query('COMMIT');
  } finally {
    retiring.release();
  }
  const r = await submission;
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error?.code, 'invalid_request');
  assert.equal(r.body.error?.param, 'initialCheckpoint.checkpointId');
  assert.equal(await jobs(), before);
});

test('a sweep finishes deletions a crash or a failing store left, and keeps the rows it could not do', async () => {
  const job = await placedJob(1);
  await job.checkpoint(2);
  // As if the API died after retiring steps 10 and 12 and before deleting their files.
  for (const step of [10, 12]) {
    mkdirSync(dirOf(job.jobId, step), { recursive: true });
    writeFileSync(fileOf(job.jobId, step), 'orphan');
  }
  const { pool } = h.api.deps.db;
  await pool.query(`INSERT INTO checkpoint_deletions (job_id, step) VALUES ($1, 10), ($1, 12)`, [job.jobId]);
  // A store that fails on the second: the first row goes, the second stays for the next sweep.
  let calls = 0;
  const failing = {
    deleteDir: async (dirKey: string) => {
      if (++calls === 2) throw new Error('store unavailable');
      await h.api.deps.storage.deleteDir(dirKey);
    },
  };
  await assert.rejects(sweepRetiredCheckpoints(pool, failing), /store unavailable/);
  assert.equal(existsSync(dirOf(job.jobId, 10)), false);
  assert.equal(existsSync(dirOf(job.jobId, 12)), true);
  assert.equal(await pendingDeletions(), 1);
  assert.equal(await sweepRetiredCheckpoints(pool, h.api.deps.storage), 1);
  assert.equal(existsSync(dirOf(job.jobId, 12)), false);
  assert.equal(await pendingDeletions(), 0);
  assert.deepEqual(await job.steps(), [2]);
});

test('keepCheckpoints below 1 is refused at submission, writing nothing', async () => {
  const jobs = async () =>
    (await h.api.deps.db.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1`, [t.id]))
      .rows[0].n as number;
  const before = await jobs();
  const r = await t
    .as(h.http.post('/v1/jobs'))
    .send({ name: 'none-kept', workflow: { task: { name: 'addition' }, keepCheckpoints: 0 } })
    .expect(400);
  assert.equal(r.body.error.code, 'invalid_request');
  assert.equal(r.body.error.param, 'workflow.keepCheckpoints');
  assert.equal(await jobs(), before);
});
