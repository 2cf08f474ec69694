/**
 * Jobs that cannot run end instead of looping: a spec the engine refuses (the API refuses those it
 * can foresee) fails on its first run with the engine's reason, and a run that crashes before it
 * starts (its checkpoint cannot be read) uses up an attempt, so the job fails once its attempts are
 * spent. A job whose initial checkpoint is gone fails at once rather than start from a fresh model.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { eventsOf, startCluster, waitFor, waitForStatus, type Cluster } from '../helpers/cluster.js';
import { checkpointDirKey } from '../../common/storage/index.js';
import type { TestTenant } from '../helpers/api-harness.js';
import { jobSpecSchema } from '../../common/job-spec.js';
import { admissionElement } from '../../api/jobs/admit.js';

let c: Cluster;
let t: TestTenant;

before(async () => {
  c = await startCluster();
  await c.startWorker('unrunnable-node', 1);
  t = await c.h.createTenant('unrunnable');
});
after(() => c.close());

const small = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  workflow: {
    model: { preset: 'micro' },
    task: { name: 'addition', digits: 1 },
    steps: 3,
    promptsPerStep: 8,
    groupSize: 4,
    checkpointEvery: 3,
    warmup: { maxSteps: 0 },
    ...extra,
  },
});

async function submit(spec: object): Promise<string> {
  return (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
}

test('a spec the engine refuses fails on its first run, with the engine’s reason', async () => {
  // Reversal of 16 letters needs a context of 34. The API refuses this spec now (400 naming the
  // field), but a job admitted before it did, or refused for a reason the API cannot foresee, still
  // reaches the engine: it is admitted here as the API admitted it then.
  const model = { dModel: 32, layers: 1, heads: 2, contextLength: 8 };
  const spec = {
    name: 'context-too-short',
    workflow: {
      model,
      task: { name: 'reversal', minLength: 16, maxLength: 16 },
      steps: 2,
      promptsPerStep: 8,
      groupSize: 4,
      warmup: { maxSteps: 0 },
    },
  };
  const refused = await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(400);
  assert.equal(refused.body.error.param, 'workflow.model.contextLength');
  const fits = jobSpecSchema.parse({
    ...spec,
    workflow: { ...spec.workflow, model: { ...model, contextLength: 34 } },
  });
  const stored = {
    ...fits,
    workflow: { ...fits.workflow, model: { ...fits.workflow.model, contextLength: 8 } },
  };
  const admitted = await c.sql.query(`SELECT id FROM admit_jobs($1::jsonb)`, [
    JSON.stringify([admissionElement(t.id, stored)]),
  ]);
  const id = admitted.rows[0].id as string;
  const job = await waitForStatus(c, t, id, ['failed', 'succeeded'], 60_000);
  assert.equal(job.status, 'failed');
  assert.match(job.error ?? '', /engine cannot run this job: model context 8 is shorter/);
  const events = await eventsOf(c, t, id);
  const requeued = events.filter((e) => e.type === 'job.queued' && e.data.reason === 'crashed');
  assert.equal(requeued.length, 0, events.map((e) => e.type).join(', '));
});

test('a run that crashes before it starts uses up an attempt', async () => {
  const source = await submit(small('source'));
  assert.equal((await waitForStatus(c, t, source, ['failed', 'succeeded'])).status, 'succeeded');
  const [ck] = (await t.as(c.h.http.get(`/v1/jobs/${source}/checkpoints`)).expect(200)).body.data as {
    id: string;
    step: number;
  }[];
  assert.ok(ck);
  // The checkpoint's record stays, its files go: every run of the job below dies reading them.
  await rm(path.join(c.env.TIMESHARE_STORAGE_ROOT!, checkpointDirKey(source, ck.step)), {
    recursive: true,
    force: true,
  });
  const id = await submit({
    ...small('from-lost-files'),
    maxAttempts: 2,
    initialCheckpoint: { jobId: source, checkpointId: ck.id },
  });
  const job = await waitForStatus(c, t, id, ['failed', 'succeeded'], 60_000);
  assert.equal(job.status, 'failed');
  assert.equal(job.attempts, 2);
  assert.match(job.error ?? '', /job process exited with code 2/);
  const crashes = await waitFor('the crash events', async () => {
    const ev = await eventsOf(c, t, id);
    return ev.some((e) => e.type === 'job.failed') ? ev : null;
  });
  assert.equal(crashes.filter((e) => e.type === 'job.queued' && e.data.reason === 'crashed').length, 1);
});

test('a job whose initial checkpoint was deleted before it first ran fails on that run, saying so', async () => {
  // Admission refuses a job whose checkpoint is gone (the jobs trigger of migration
  // 20261128120000), and retention keeps those a job names; a job admitted before that migration
  // could have lost its checkpoint to retention all the same, and an operator can delete the row
  // by hand. Admitted here as it was then, past the trigger: the record is gone.
  const gone = { jobId: randomUUID(), checkpointId: randomUUID() };
  const stored = jobSpecSchema.parse({ ...small('from-deleted'), initialCheckpoint: gone });
  const admission = await c.sql.connect();
  let id: string;
  try {
    await admission.query('BEGIN');
    await admission.query(`ALTER TABLE jobs DISABLE TRIGGER jobs_pin_initial_checkpoint`);
    const admitted = await admission.query(`SELECT id FROM admit_jobs($1::jsonb)`, [
      JSON.stringify([admissionElement(t.id, stored)]),
    ]);
    await admission.query(`ALTER TABLE jobs ENABLE TRIGGER jobs_pin_initial_checkpoint`);
    await admission.query('COMMIT');
    id = admitted.rows[0].id as string;
  } finally {
    admission.release();
  }
  const job = await waitForStatus(c, t, id, ['failed', 'succeeded'], 60_000);
  assert.equal(job.status, 'failed', 'not trained from a fresh model instead');
  assert.match(job.error ?? '', new RegExp(`initialCheckpoint ${gone.checkpointId} .*no longer exists`));
  const events = await eventsOf(c, t, id);
  assert.ok(!events.some((e) => e.type === 'job.queued' && e.data.reason === 'crashed'), 'not retried');
});
