/**
 * Spatial placement, PipelineRL-style: generation on one device and training on another, each under
 * its own lock, overlapping in time, with weights published through shared memory and applied by
 * the generator in flight. The job learns and records its weight-version lag.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, waitForStatus, type Cluster } from '../helpers/cluster.js';

let c: Cluster;
let nodeId: string;
before(async () => {
  c = await startCluster({ maxJobsPerDevice: 1 });
  await c.startWorker('pipeline-node', 2);
  nodeId = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data[0].id;
});
after(() => c.close());

test(
  'a spatial job pipelines generation and training on disjoint devices',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('pipeliner');
    const spec = {
      name: 'async-rl',
      resources: { devices: 2 },
      workflow: {
        mode: 'spatial',
        algorithm: 'reinforce_is',
        maxWeightLag: 2,
        model: { preset: 'tiny' },
        task: { name: 'addition', digits: 1 },
        steps: 30,
        promptsPerStep: 32,
        groupSize: 8,
        checkpointEvery: 10,
        evalEvery: 10,
        warmup: { maxSteps: 300, targetAccuracy: 0.5 },
      },
    };
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');

    const holds = (await c.h.admin(c.h.http.get(`/v1/nodes/${nodeId}/timeline?limit=10000`)).expect(200)).body
      .data as {
      device: number;
      stage: string;
      start: string;
      end: string;
    }[];
    const gen = holds.filter((h) => h.stage === 'generate');
    const train = holds.filter((h) => h.stage === 'train');
    assert.equal(train.length, 30);
    assert.ok(gen.length >= 30);
    assert.ok(
      gen.every((h) => h.device === 0) && train.every((h) => h.device === 1),
      'stages on disjoint devices',
    );
    const overlaps = train.filter((tr) => gen.some((g) => g.start < tr.end && tr.start < g.end)).length;
    assert.ok(overlaps >= 10, `generation overlapped ${overlaps} of 30 training steps`);

    const lag = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=weight_version_lag`)).expect(200)).body
      .data;
    assert.equal(lag.length, 30);
    // The staleness the learner trained on, bounded by the job's maxWeightLag (2).
    assert.ok(lag.every((m: { value: number }) => m.value >= 0 && m.value <= 2));
    const rewards = (
      await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)
    ).body.data.map((m: { value: number }) => m.value);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    assert.ok(
      mean(rewards.slice(-5)) > mean(rewards.slice(0, 5)),
      `reward improved: ${rewards.map((r: number) => r.toFixed(2))}`,
    );
  },
);
