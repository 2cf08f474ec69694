/**
 * A spatial job started from another job's checkpoint runs the checkpoint's model on both of its
 * engines: the learner is restored from the checkpoint, so the generator must be that model too, or
 * it cannot attach the learner's weights. The spec it is submitted with leaves the model out; the
 * spec stored for it says the checkpoint's, as do its own checkpoints.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, waitForStatus, type Cluster } from '../helpers/cluster.js';
import type { TestTenant } from '../helpers/api-harness.js';

let c: Cluster;
let t: TestTenant;

before(async () => {
  c = await startCluster();
  await c.startWorker('from-checkpoint-node', 2);
  t = await c.h.createTenant('from-checkpoint');
});
after(() => c.close());

const workflow = {
  task: { name: 'addition', digits: 1 },
  steps: 3,
  promptsPerStep: 8,
  groupSize: 4,
  checkpointEvery: 3,
  warmup: { maxSteps: 0 },
};

async function submit(spec: object): Promise<string> {
  return (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
}

test('a spatial job runs from a checkpoint of a model its spec does not name', async () => {
  const source = await submit({
    name: 'micro-source',
    workflow: { ...workflow, model: { preset: 'micro' } },
  });
  assert.equal((await waitForStatus(c, t, source, ['failed', 'succeeded'])).status, 'succeeded');
  const [ck] = (await t.as(c.h.http.get(`/v1/jobs/${source}/checkpoints`)).expect(200)).body.data;
  // The spec leaves the model at its default (tiny); the checkpoint is micro.
  const id = await submit({
    name: 'spatial-from-micro',
    resources: { devices: 2 },
    initialCheckpoint: { jobId: source, checkpointId: ck.id },
    workflow: { ...workflow, mode: 'spatial' },
  });
  const job = await waitForStatus(c, t, id, ['failed', 'succeeded'], 90_000);
  assert.equal(job.status, 'succeeded', job.error ?? '');
  assert.equal(job.attempts, 1);
  const rewards = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body.data;
  assert.deepEqual(
    rewards.map((m: { step: number }) => m.step),
    [1, 2, 3],
  );
  // What it shows is what ran: its stored spec, and the task its checkpoints record.
  const micro = { preset: 'micro', dModel: 32, layers: 1, heads: 2, contextLength: 32 };
  const { spec } = (await t.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
  assert.deepEqual(spec.workflow.model, micro);
  const [own] = (await t.as(c.h.http.get(`/v1/jobs/${id}/checkpoints`)).expect(200)).body.data;
  assert.deepEqual(own.meta.task, { name: 'addition', digits: 1, seed: 1 });
});
