/**
 * What a job shows when it runs again after a run that ended badly. Its `error` is what ended its
 * last run: a job requeued after a crash or a lost node kept it through its next run
 * (`"status":"running","error":"node vm released"`), so the start of a run clears it, and a run that
 * fails the job for good sets its own. Its events carry `countedAttempts` (the runs that count
 * toward `maxAttempts`, as `GET /v1/jobs/{id}` reports them) beside `attempt` (every run): a
 * webhook consumer read `"attempt":6, "maxAttempts":3` as past the last attempt when preemptions
 * and drains had used none.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { oneDevice, placeOnNode, registerTestNode, type TestNode } from '../helpers/test-node.js';

let h: Harness;
let acme: TestTenant;
let node: TestNode;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
  node = await registerTestNode(h, 'rerun-node');
});
after(() => h.close());

const submit = async (name: string, maxAttempts = 3) =>
  (
    await acme
      .as(h.http.post('/v1/jobs'))
      .send({ name, maxAttempts, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;

const post = async (jobId: string, what: string, body: object) =>
  assert.equal(
    (
      await node
        .as(h.http.post(`/v1/nodes/${node.id}/jobs/${jobId}/${what}`))
        .send(body)
        .expect(200)
    ).body.applied,
    true,
    `${what} ${JSON.stringify(body)} applied`,
  );

const job = async (jobId: string) => (await acme.as(h.http.get(`/v1/jobs/${jobId}`)).expect(200)).body;

/** Places the job and starts its run; returns the run's queueSeq. */
async function run(jobId: string) {
  const queueSeq = await placeOnNode(h, node.id, jobId);
  await post(jobId, 'start', { queueSeq });
  return queueSeq;
}

test("a job running again shows none of its earlier run's error; a final failure keeps its own", async () => {
  const jobId = await submit('crashes-then-runs');
  const first = await run(jobId);
  await post(jobId, 'finish', {
    queueSeq: first,
    outcome: 'crashed',
    error: 'job process exited with code 1',
  });
  assert.equal((await job(jobId)).error, 'job process exited with code 1', 'queued: why its run ended');

  const second = await placeOnNode(h, node.id, jobId);
  await post(jobId, 'start', { queueSeq: second });
  const running = await job(jobId);
  assert.equal(running.status, 'running');
  assert.equal(running.error, null, 'running again: the crash was its last run, not this one');

  // A lost node (its daemon registered again) is an error too, cleared by the next run's start.
  await node
    .as(h.http.post('/v1/nodes/register'))
    .send({ name: 'rerun-node', devices: oneDevice })
    .expect(200);
  assert.match((await job(jobId)).error ?? '', /node rerun-node restarted/);
  const third = await run(jobId);
  assert.equal((await job(jobId)).error, null);
  // The lost node's run counted (docs/api.md, maxAttempts): this third crash fails the job.
  await post(jobId, 'finish', {
    queueSeq: third,
    outcome: 'crashed',
    error: 'job process exited with SIGKILL',
  });
  const failed = await job(jobId);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error, 'job process exited with SIGKILL', 'the run that failed it says why');
});

test('job.running and job.queued carry countedAttempts beside attempt, as GET /v1/jobs/{id} counts them', async () => {
  const jobId = await submit('preempted-twice');
  // Two runs the platform ended (a preemption, a drain): they use none of maxAttempts.
  await post(jobId, 'finish', { queueSeq: await run(jobId), outcome: 'preempted' });
  await post(jobId, 'finish', { queueSeq: await run(jobId), outcome: 'drained' });
  const third = await run(jobId);
  await post(jobId, 'finish', { queueSeq: third, outcome: 'crashed', error: 'boom' });

  const events = (await acme.as(h.http.get(`/v1/jobs/${jobId}/events`)).expect(200)).body.data as {
    type: string;
    data: Record<string, unknown>;
  }[];
  const counts = events
    .filter((e) => e.type === 'job.running' || e.type === 'job.queued')
    .filter((e) => e.data.attempt !== undefined)
    .map((e) => [e.type, e.data.attempt, e.data.countedAttempts, e.data.maxAttempts]);
  assert.deepEqual(counts, [
    ['job.queued', 0, 0, undefined], // submitted
    ['job.running', 1, 1, 3],
    ['job.queued', 1, 0, 3], // preempted: given back
    ['job.running', 2, 1, 3],
    ['job.queued', 2, 0, 3], // drained: given back
    ['job.running', 3, 1, 3],
    ['job.queued', 3, 1, 3], // crashed: counted
  ]);
  const j = await job(jobId);
  assert.equal(j.attempts, 3);
  assert.equal(j.countedAttempts, 1, 'the figure the last event carries');
});
