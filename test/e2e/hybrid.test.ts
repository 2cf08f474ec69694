/**
 * Issue 12's hybrid placement, end to end: a `mode: "hybrid"` job submitted over REST is placed by
 * the real scheduler with generation on every one of its devices and training on part of them,
 * and the real worker daemon runs it with real engines under the Redis device lock: the node's
 * timeline shows generation holds on every device, training holds only on the training part, and
 * the stages never holding a shared device at once. The job learns and succeeds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventsOf, startCluster, waitForStatus, type Cluster } from '../helpers/cluster.js';

let c: Cluster;
let nodeId: string;
before(async () => {
  c = await startCluster({ maxJobsPerDevice: 1 });
  await c.startWorker('hybrid-node', 2);
  nodeId = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data[0].id;
});
after(() => c.close());

test(
  'a hybrid job generates on every device and trains on part of them, taking turns',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('hybrid');
    const steps = 12;
    const spec = {
      name: 'hybrid',
      resources: { devices: 2 },
      workflow: {
        mode: 'hybrid',
        microBatches: 2,
        model: { preset: 'tiny' },
        task: { name: 'addition', digits: 1 },
        steps,
        promptsPerStep: 16,
        groupSize: 8,
        checkpointEvery: 6,
        evalEvery: 1000,
        warmup: { maxSteps: 0 },
      },
    };
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed'], 240_000);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    assert.equal(job.attempts, 1);

    const placed = (await eventsOf(c, t, id)).find((e) => e.type === 'job.placed')!.data;
    const placement = placed.placement as { mode: string; stages: { generate: number[]; train: number[] } };
    assert.equal(placement.mode, 'hybrid');
    assert.deepEqual([...placement.stages.generate].sort(), [0, 1], 'generation on every device');
    assert.ok(placement.stages.train.length >= 1 && placement.stages.train.length < 2, 'training on part');

    const holds = (await c.h.admin(c.h.http.get(`/v1/nodes/${nodeId}/timeline?limit=10000`)).expect(200)).body
      .data as { device: number; stage: string; start: string; end: string }[];
    const gen = holds.filter((h) => h.stage === 'generate');
    const train = holds.filter((h) => h.stage === 'train');
    assert.deepEqual([...new Set(gen.map((h) => h.device))].sort(), [0, 1], 'generation held both devices');
    assert.deepEqual(
      [...new Set(train.map((h) => h.device))].sort(),
      [...placement.stages.train].sort(),
      'training held only its part',
    );
    // One training hold per micro-batch per step, each micro-batch generated first.
    assert.equal(train.length, steps * 2 * placement.stages.train.length);
    // On the shared device the two stages take turns: no generation hold overlaps a training hold.
    const shared = placement.stages.train[0]!;
    const at = (h: { start: string; end: string }) => [Date.parse(h.start), Date.parse(h.end)] as const;
    for (const tr of train.filter((h) => h.device === shared))
      for (const g of gen.filter((h) => h.device === shared)) {
        const [a, b] = at(tr);
        const [x, y] = at(g);
        assert.ok(b <= x || y <= a, `generation and training held device ${shared} at once`);
      }

    const metrics = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
      .data;
    assert.equal(metrics.length, steps, 'every step trained once');
  },
);
