/**
 * A job's `progress`: the newest step its runs reported, the steps its spec asks for, and while it
 * runs an estimated finish at the pace of its current run (from the run's first reported step, so
 * the start of the run does not count). A run resumed from a checkpoint goes on from its step.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { kueueLikePolicy } from '../../scheduler/core/policy.js';
import { publishQueueViews } from '../helpers/queue-views.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let acme: TestTenant;
let node: TestNode['as'];
let nodeId: string;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  ({ as: node, id: nodeId } = await registerTestNode(h, 'paced'));
});
after(() => h.close());

const place = (jobId: string) => placeOnNode(h, nodeId, jobId);

const post = (jobId: string, what: string, body: object) =>
  node(h.http.post(`/v1/nodes/${nodeId}/jobs/${jobId}/${what}`))
    .send(body)
    .expect(200);
const progressOf = async (jobId: string) =>
  (await acme.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body.progress;
const pause = () => new Promise((r) => setTimeout(r, 30));

test('progress follows the reported steps, and a running job gets an estimated finish', async () => {
  const jobId = (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'paced', workflow: { task: { name: 'addition' }, steps: 40 } })
      .expect(201)
  ).body.id as string;
  assert.deepEqual(await progressOf(jobId), {
    step: null,
    steps: 40,
    updatedAt: null,
    estimatedFinishAt: null,
  });

  const run1 = await place(jobId);
  await post(jobId, 'start', { queueSeq: run1 });
  assert.equal((await progressOf(jobId)).step, 0);
  let seq = 0;
  const stepDone = async (queueSeq: number, step: number) => {
    await pause();
    await post(jobId, 'report', {
      queueSeq,
      reportSeq: ++seq,
      metrics: [
        { step, name: 'loss', value: 0.5 },
        { step, name: 'reward_mean', value: 0.2 },
      ],
    });
  };
  for (const step of [1, 2, 3]) await stepDone(run1, step);
  const three = await progressOf(jobId);
  assert.equal(three.step, 3);
  assert.equal(three.estimatedFinishAt, null, 'two steps of pace are not enough');
  await stepDone(run1, 4);
  // A report without metrics (device-seconds only) moves nothing.
  await post(jobId, 'report', { queueSeq: run1, reportSeq: ++seq, deviceSeconds: 0.01 });
  const four = await progressOf(jobId);
  assert.equal(four.step, 4);
  const pace = (
    await h.api.deps.db.pool.query('SELECT progress_at, pace_step, pace_at FROM jobs WHERE id = $1', [jobId])
  ).rows[0];
  assert.equal(pace.pace_step, 1);
  const perStep = (pace.progress_at.getTime() - pace.pace_at.getTime()) / 3;
  assert.ok(perStep >= 30, `${perStep} ms a step`);
  assert.equal(four.updatedAt, pace.progress_at.toISOString());
  assert.equal(
    four.estimatedFinishAt,
    new Date(pace.progress_at.getTime() + Math.round(36 * perStep)).toISOString(),
  );

  // Preempted: back in the queue, it keeps its step and loses its estimate.
  await post(jobId, 'finish', { queueSeq: run1, outcome: 'preempted' });
  assert.deepEqual(await progressOf(jobId), { ...four, estimatedFinishAt: null });

  // Resumed from its step-2 checkpoint: the new run goes on from there, its pace its own.
  const run2 = await place(jobId);
  await post(jobId, 'start', { queueSeq: run2, resumedFromStep: 2 });
  const resumed = await progressOf(jobId);
  assert.equal(resumed.step, 2);
  assert.equal(resumed.estimatedFinishAt, null);
  seq = 0;
  for (const step of [3, 4, 5, 6]) await stepDone(run2, step);
  const again = await progressOf(jobId);
  assert.equal(again.step, 6);
  assert.ok(again.estimatedFinishAt > again.updatedAt, JSON.stringify(again));

  await post(jobId, 'finish', { queueSeq: run2, outcome: 'succeeded' });
  const done = await progressOf(jobId);
  assert.equal(done.step, 6);
  assert.equal(done.estimatedFinishAt, null);
  // Lists carry it too.
  const listed = (await acme.as(h.http.get('/v1/jobs')).expect(200)).body.data.find(
    (j: { id: string }) => j.id === jobId,
  );
  assert.deepEqual(listed.progress, done);
});

test('a running job cancelled answers with its progress (read back from row_to_json)', async () => {
  const jobId = (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'stopped', workflow: { task: { name: 'addition' }, steps: 10 } })
      .expect(201)
  ).body.id as string;
  const run = await place(jobId);
  await post(jobId, 'start', { queueSeq: run, resumedFromStep: 3 });
  const running = await progressOf(jobId);
  const cancelled = (await acme.as(h.http.post(`/v1/jobs/${jobId}/cancel`)).expect(200)).body;
  assert.equal(cancelled.status, 'cancelled');
  assert.deepEqual(cancelled.progress, { ...running, estimatedFinishAt: null });
  assert.equal(cancelled.progress.step, 3);
  assert.equal(typeof cancelled.startedAt, 'string');
});

test("a queued job's estimated finish is the scheduler's: its estimated start and its run", async () => {
  const submit = async (name: string) =>
    (
      await acme
        .as(h.http.post('/v1/jobs'))
        .send({ name, workflow: { task: { name: 'addition' }, steps: 30 } })
        .expect(201)
    ).body.id as string;
  const holder = await submit('holder');
  const run = await place(holder);
  await post(holder, 'start', { queueSeq: run });
  const waiting = await submit('waiting');
  // One round, as the scheduler runs it, without time-sharing: the waiting job waits for the device.
  await publishQueueViews(h, kueueLikePolicy);
  const job = (await acme.as(h.http.get(`/v1/jobs/${waiting}`)).expect(200)).body;
  assert.equal(job.status, 'queued');
  assert.ok(job.estimatedStartAt, JSON.stringify(job));
  assert.ok(
    Date.parse(job.progress.estimatedFinishAt) > Date.parse(job.estimatedStartAt),
    JSON.stringify(job.progress),
  );
  const queue = (await h.admin(h.http.get('/v1/pools/default/queue')).expect(200)).body.data;
  const entry = queue.find((e: { jobId: string }) => e.jobId === waiting);
  assert.equal(entry.estimatedFinishAt, job.progress.estimatedFinishAt);
  await acme.as(h.http.post(`/v1/jobs/${holder}/cancel`)).expect(200);
  await acme.as(h.http.post(`/v1/jobs/${waiting}/cancel`)).expect(200);
});
