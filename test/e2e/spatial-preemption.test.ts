/**
 * A two-engine job preempted and resumed, end to end: a low-priority `spatial` job (generation on
 * one device, training on the other, each engine its own), and a `hybrid` one (generation on both,
 * training on one, taking turns on the shared device), is given a priority notice by the real
 * scheduler when an urgent job of its tenant arrives, checkpoints its learner within the grace,
 * gives both devices back, and once the urgent job is done resumes in a new placement from that
 * checkpoint — its learner restored, a fresh generator on the learner's published weights — and
 * trains on. The resume path of a two-engine job is otherwise tested only in the stage-loop harness.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  QUICK_PREEMPTION_ENV,
  eventsOf,
  startCluster,
  steadyJob,
  waitFor,
  waitForStatus,
  type Cluster,
} from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  c = await startCluster({
    maxJobsPerDevice: 1,
    env: QUICK_PREEMPTION_ENV,
  });
  await c.startWorker('spatial-prio-node', 2);
});
after(() => c.close());

const modes = {
  spatial: { mode: 'spatial', maxWeightLag: 1 },
  hybrid: { mode: 'hybrid', microBatches: 2 },
};
for (const [mode, workflow] of Object.entries(modes))
  test(
    `a preempted ${mode} job checkpoints, gives its devices back and resumes from its checkpoint`,
    { timeout: 240_000 },
    async () => {
      const t = await c.h.createTenant(`${mode}-prio`);
      const submit = async (spec: object) =>
        (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
      const low = await submit({
        // Far from its end: a measured job predicted to end within the grace gets no notice.
        ...steadyJob(`low-${mode}`, 2000, { ...workflow, warmup: { maxSteps: 0 } }),
        resources: { devices: 2 },
        priority: 'low',
      });
      await waitForStatus(c, t, low, ['running']);
      await waitFor('a checkpoint', async () =>
        (await eventsOf(c, t, low)).some((e) => e.type === 'job.checkpoint'),
      );
      const urgent = await submit({
        ...steadyJob('urgent', 5),
        resources: { devices: 2 },
        priority: 'urgent',
      });
      const notice = await waitFor('a preemption notice', async () =>
        (await eventsOf(c, t, low)).find((e) => e.type === 'job.preempting'),
      );
      assert.equal(notice.data.reason, 'priority');
      assert.equal(notice.data.forJobId, urgent);
      assert.equal((await waitForStatus(c, t, urgent, ['succeeded', 'failed'])).status, 'succeeded');

      // Resumed, it trains on: a checkpoint past the one it resumed from, then it is cancelled.
      const resumedFrom = await waitFor('the resumed run', async () => {
        const runs = (await eventsOf(c, t, low)).filter((e) => e.type === 'job.running');
        return runs.length === 2 ? Number(runs[1]!.data.resumedFromStep) : null;
      });
      await waitFor('a checkpoint after the resume', async () =>
        (await eventsOf(c, t, low)).some(
          (e) => e.type === 'job.checkpoint' && Number(e.data.step) > resumedFrom,
        ),
      );
      await t.as(c.h.http.post(`/v1/jobs/${low}/cancel`)).expect(200);
      assert.equal(
        (await waitForStatus(c, t, low, ['cancelled', 'failed', 'succeeded'])).status,
        'cancelled',
      );
      const events = await eventsOf(c, t, low);
      const preempted = events.find((e) => e.type === 'job.preempted')!;
      assert.ok(preempted, 'gave its devices back');
      assert.notEqual(preempted.data.graceExpired, true, 'checkpointed within the grace');
      const runs = events.filter((e) => e.type === 'job.running');
      assert.equal(runs.length, 2, 'ran, was preempted, ran again');
      assert.ok(Number(runs[1]!.data.resumedFromStep) > 0, 'resumed from its checkpoint, not from scratch');
      const placements = events
        .filter((e) => e.type === 'job.placed')
        .map((e) => e.data.placement as { mode: string });
      assert.deepEqual(
        placements.map((p) => p.mode),
        [mode, mode],
      );
      // Every step trained once across the resume: the metrics' steps run on without a gap.
      const steps = (
        await t.as(c.h.http.get(`/v1/jobs/${low}/metrics?name=reward_mean&limit=10000`)).expect(200)
      ).body.data.map((m: { step: number }) => m.step);
      const last = Math.max(...steps);
      assert.ok(last > resumedFrom, 'trained past the step it resumed from');
      for (let s = 1; s <= last; s++) assert.ok(steps.includes(s), `step ${s} trained`);
    },
  );
