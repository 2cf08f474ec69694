/**
 * A spatial job the reactive balancer has moved, drained from its node (the daemon's SIGTERM, as
 * an autoscaler scales in): it checkpoints from its restarted learner, goes back to the queue as
 * `drained`, and resumes from that checkpoint on the next node, where it finishes. The move's
 * restart and the drain's checkpoint are tested apart (the stage-loop harness); this is the two
 * through the daemon, the scheduler and the API. Devices are emulated as in balancer-move.test.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  eventsOf,
  GENERATION_BOUND_ENV,
  generationBoundJob,
  startCluster,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  c = await startCluster({
    maxJobsPerDevice: 1,
    nodeTimeoutMs: 30_000,
    env: GENERATION_BOUND_ENV,
  });
  await c.startWorker('drain-a', 4);
});
after(() => c.close());

test(
  'a spatial job drained after a move resumes on the next node from its checkpoint',
  { timeout: 300_000 },
  async () => {
    const t = await c.h.createTenant('drained');
    const spec = generationBoundJob(60, 3);
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const saved = await waitFor(
      'a move, then a checkpoint',
      async () => {
        const ev = await eventsOf(c, t, id);
        const moved = ev.findIndex((e) => e.type === 'job.rebalanced');
        const after = moved < 0 ? undefined : ev.slice(moved).find((e) => e.type === 'job.checkpoint');
        return after ? Number(after.data.step) : null;
      },
      120_000,
    );
    const a = c.workers.get('drain-a')!;
    assert.equal(await a.kill('SIGTERM'), 0, a.output());
    await c.startWorker('drain-b', 4);

    const job = await waitForStatus(c, t, id, ['succeeded', 'failed'], 240_000);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const events = await eventsOf(c, t, id);
    assert.ok(
      events.some((e) => e.type === 'job.queued' && e.data.reason === 'drained'),
      'back in the queue as drained',
    );
    const runs = events.filter((e) => e.type === 'job.running');
    assert.equal(runs.length, 2, 'ran, was drained, ran again');
    assert.notEqual(runs[0]!.data.nodeId, runs[1]!.data.nodeId, 'on the next node');
    // From the checkpoint its restarted learner wrote after the move, or a later one.
    assert.ok(
      Number(runs[1]!.data.resumedFromStep) >= saved,
      `resumed from ${runs[1]!.data.resumedFromStep} ≥ ${saved}`,
    );
  },
);
