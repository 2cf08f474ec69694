/**
 * Spatial placement with micro-batches at weight lag 0 (on-policy): no step's generation starts
 * before the previous step's weights are published, yet within a step the learner trains
 * micro-batch i while the generator produces micro-batch i + 1, each under its own device lock.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkpointStepBefore,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
let nodeId: string;
before(async () => {
  c = await startCluster({ maxJobsPerDevice: 1 });
  await c.startWorker('micro-batch-node', 2);
  nodeId = (await c.h.admin(c.h.http.get('/v1/nodes')).expect(200)).body.data[0].id;
});
after(() => c.close());

const STEPS = 6;
const MICRO = 4;

const spatialJob = (name: string, steps: number) => ({
  ...steadyJob(name, steps, {
    mode: 'spatial',
    algorithm: 'grpo',
    maxWeightLag: 0,
    microBatches: MICRO,
    groupSize: 4,
    checkpointEvery: 3,
    evalEvery: 100,
    warmup: { maxSteps: 0 },
  }),
  resources: { devices: 2 },
});

test(
  'an on-policy spatial job overlaps generation and training within each step',
  { timeout: 180_000 },
  async () => {
    const t = await c.h.createTenant('micro-batcher');
    const spec = spatialJob('micro-batched', STEPS);
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');

    // One profile per micro-batch stage, each of promptsPerStep / microBatches prompts.
    const { rows } = await c.h.api.deps.db.pool.query(
      `SELECT stage, step, count(*)::int AS n, min(batch) AS lo, max(batch) AS hi FROM stage_profiles
     WHERE job_id = $1 AND stage IN ('generate', 'train') GROUP BY stage, step ORDER BY stage, step`,
      [id],
    );
    assert.equal(rows.length, 2 * STEPS);
    for (const r of rows) assert.deepEqual([r.n, r.lo, r.hi], [MICRO, (32 / MICRO) * 4, (32 / MICRO) * 4]);
    // Generation reports its slot occupancy (the planner's tail), training none.
    const occupancy = await c.h.api.deps.db.pool.query(
      `SELECT stage, count(occupancy)::int AS n, min(occupancy) AS lo, max(occupancy) AS hi FROM stage_profiles
     WHERE job_id = $1 AND stage IN ('generate', 'train') GROUP BY stage ORDER BY stage`,
      [id],
    );
    const [gen0, train0] = occupancy.rows;
    assert.equal(gen0.n, STEPS * MICRO);
    assert.ok(gen0.lo > 0 && gen0.hi <= 1, `generation occupancy ${gen0.lo}–${gen0.hi}`);
    assert.equal(train0.n, 0);

    const holds = (await c.h.admin(c.h.http.get(`/v1/nodes/${nodeId}/timeline?limit=10000`)).expect(200)).body
      .data as { device: number; stage: string; start: string; end: string }[];
    const gen = holds.filter((h) => h.stage === 'generate');
    const train = holds.filter((h) => h.stage === 'train');
    assert.equal(gen.length, STEPS * MICRO);
    assert.equal(train.length, STEPS * MICRO);
    assert.ok(gen.every((h) => h.device === 0) && train.every((h) => h.device === 1), 'disjoint devices');
    const overlapping = train.filter((tr) => gen.some((g) => g.start < tr.end && tr.start < g.end)).length;
    assert.ok(
      overlapping >= STEPS,
      `${overlapping} of ${train.length} train holds overlapped a generate hold`,
    );

    const metric = async (name: string) =>
      (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=${name}`)).expect(200)).body.data.map(
        (m: { value: number }) => m.value,
      ) as number[];
    assert.deepEqual(await metric('micro_batches'), Array(STEPS).fill(MICRO));
    // Lag 0 is on-policy: every token was sampled under the newest published weights.
    assert.deepEqual(await metric('weight_version_lag'), Array(STEPS).fill(0));
    // Before a step publishes, the generator can only be producing that same step's micro-batches,
    // so this overlap is within the step.
    const overlap = await metric('pipeline_overlap_seconds');
    assert.equal(overlap.length, STEPS);
    assert.ok(
      overlap.filter((s) => s > 0).length >= STEPS / 2,
      `training overlapped generation within steps: ${overlap.map((s) => s.toFixed(3)).join(' ')}`,
    );
  },
);

test(
  'preempting between micro-batches checkpoints the last whole step; the job resumes to success',
  {
    timeout: 180_000,
  },
  async () => {
    const t = await c.h.createTenant('micro-preempted');
    const steps = 30;
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spatialJob('micro-preempt', steps)).expect(201))
      .body.id as string;
    const rewards = async () =>
      (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
        .data as unknown[];
    await waitFor('two trained steps', async () => ((await rewards()).length >= 2 ? true : null));
    await c.h.admin(c.h.http.post(`/v1/jobs/${id}/preempt`)).expect(202);
    await waitFor('job.preempted', async () =>
      (await eventsOf(c, t, id)).some((e) => e.type === 'job.preempted') ? true : null,
    );
    const saved = checkpointStepBefore(await eventsOf(c, t, id), 'job.preempted');
    assert.ok(saved >= 2, `checkpointed step ${saved}`);
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const runs = (await eventsOf(c, t, id)).filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2);
    assert.equal(runs[1]!.data.resumedFromStep, saved);
    assert.equal((await rewards()).length, steps, 'every step trained exactly once');
  },
);
