// npm test: alone (it measures step times: scripts/run-tests.mjs runs it once the other lane is done).
/**
 * Issue 12's reactive balancer, end to end: a spatial job placed by the real scheduler on 4
 * devices of a real worker daemon, its engines real, whose generation is the bottleneck, gets a
 * device moved from training to generation by the worker's balancer at a step boundary; the move
 * and its measured effect reach the tenant as `job.rebalanced` and `job.rebalance_measured` through
 * the API, the job's reported `generate_devices` follows, and the job still succeeds.
 *
 * The planner places a spatial job of 4 devices with 1 generating (its prior prices training at
 * about 10× generation) and this engine on two shared cores agrees, so nothing would move: the
 * worker runs with TIMESHARE_TEST_DEVICE_WORK (emulated-devices.ts), devices whose speed adds up:
 * 480 ms of generation and 60 ms of training per call on one device, divided by the call's devices.
 * On 1 generating device and 3 training, generation is 24× training's emulated work.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventsOf,
  GENERATION_BOUND_ENV,
  generationBoundJob,
  startCluster,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  c = await startCluster({
    maxJobsPerDevice: 1,
    // 4 engine threads on a 2-core machine: a margin for slow heartbeats.
    nodeTimeoutMs: 30_000,
    env: GENERATION_BOUND_ENV,
  });
  await c.startWorker('balancer-node', 4);
});
after(() => c.close());

type Split = { generate: number; train: number };

test(
  'the balancer moves a device to a spatial job’s bottleneck, and the tenant sees it',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('balanced');
    const spec = generationBoundJob(16, 1000);
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed'], 240_000);
    assert.equal(job.status, 'succeeded', job.error ?? '');

    const events = await eventsOf(c, t, id);
    // Placed once and never back in the queue: a move restarts the job's engines, not the job (the
    // first move towards generation once crashed its process on a stale fencing token).
    assert.equal(
      events.filter((e) => e.type === 'job.placed').length,
      1,
      JSON.stringify(events.map((e) => e.type)),
    );
    assert.equal(job.attempts, 1);
    const placed = events.find((e) => e.type === 'job.placed')!.data.placement as {
      stages: { generate: number[]; train: number[] };
    };
    assert.deepEqual(
      { generate: placed.stages.generate.length, train: placed.stages.train.length },
      { generate: 1, train: 3 },
      'the planner placed generation on 1 device',
    );
    const moves = events.filter((e) => e.type === 'job.rebalanced').map((e) => e.data);
    assert.ok(moves.length >= 1, `a device was moved: ${JSON.stringify(events.map((e) => e.type))}`);
    assert.deepEqual(moves[0]!.from, { generate: 1, train: 3 });
    assert.deepEqual(moves[0]!.to, { generate: 2, train: 2 });
    for (const m of moves) {
      const from = m.from as Split;
      const to = m.to as Split;
      assert.equal(to.generate, from.generate + 1, `every move went to generation: ${JSON.stringify(moves)}`);
      assert.ok((m.imbalance as number) > 0, 'generation measured as the bottleneck');
      const stages = m.stages as { generate: number[]; train: number[] };
      assert.equal(stages.generate.length, to.generate);
      assert.equal(stages.generate.length + stages.train.length, 4, 'the job’s own 4 devices, split anew');
    }
    const measured = events.filter((e) => e.type === 'job.rebalance_measured').map((e) => e.data);
    assert.ok(measured.length >= 1, 'the steps after a move were measured');
    assert.ok(
      (measured[0]!.stepSecondsAfter as number) < (measured[0]!.stepSecondsBefore as number),
      `faster after the first move: ${JSON.stringify(measured[0])}`,
    );

    // What the job reported each step: its generating devices, from 1 to the last move's split.
    const gen = (
      await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=generate_devices`)).expect(200)
    ).body.data.map((m: { value: number }) => m.value);
    assert.equal(gen[0], 1);
    assert.equal(gen.at(-1), (moves.at(-1)!.to as Split).generate);
  },
);
