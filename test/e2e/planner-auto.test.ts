// npm test: alone (it measures step times: scripts/run-tests.mjs runs it once the other lane is done).
/**
 * Issue 12, end to end (real PostgreSQL, Redis, API, scheduler, worker daemon and native engine):
 * a job with `mode: "auto"` is placed with the plan the cost model predicts fastest, and once it
 * has run 5 profiled steps the scheduler's prediction for it (`job.plan_fitted`) is within 20% of
 * the step time it then measures.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { jobSpecSchema } from '../../common/job-spec.js';
import { candidatePlans } from '../../scheduler/planner/explain.js';
import { costModelOf, planJob } from '../../scheduler/planner/plan-job.js';
import { workloadOf } from '../../scheduler/rounds/read-snapshot.js';
import { eventsOf, startCluster, waitFor, waitForStatus, type Cluster } from '../helpers/cluster.js';

let c: Cluster;
before(async () => {
  c = await startCluster({ maxJobsPerDevice: 1 });
  await c.startWorker('auto-plan-node', 2);
});
after(() => c.close());

const STEPS = 40;

test(
  'an auto job gets the fastest predicted plan and runs within 20% of the fitted prediction',
  // With the tiny preset (0.2 s steps) the first steps ran 1.5–2.5× the later pace and the fit
  // overshot by 33–66%. The job runs the small preset (0.5–0.7 s steps); its 2 warm-up steps are
  // neither fitted nor counted as profiled steps, nor in its mean step: six runs on this machine
  // came within −1.2% to −10.9% (counting the warm-up steps among the 5, −13.9% to +21.8%).
  // In CI the fit once overshot by 21.7% (fitted 0.866 s/step, measured 0.711): the job's first
  // steps most likely shared the 2 cores with the control plane's own first requests (code compiled and
  // optimised as it first ran). A short job first leaves those paths warm, as in a running service.
  { timeout: 180_000 },
  async () => {
    const t = await c.h.createTenant('auto-planner');
    const warmId = (
      await t
        .as(c.h.http.post('/v1/jobs'))
        .send({
          name: 'warm-the-control-plane',
          resources: { devices: 2 },
          workflow: { model: { preset: 'tiny' }, task: { name: 'addition', digits: 2 }, steps: 6 },
        })
        .expect(201)
    ).body.id as string;
    assert.equal((await waitForStatus(c, t, warmId, ['succeeded', 'failed'])).status, 'succeeded');
    // Late in the suite PostgreSQL has much to write (each test file's database is copied from a
    // template): a checkpoint now rather than one due while the fit's steps run. It needs a
    // superuser (the test databases' owner here); without one the run goes on as it would.
    await c.sql.query('CHECKPOINT').catch(() => undefined);
    // Then a quiet machine: at most 2 runnable tasks (this process among them) in every sample of
    // 3 s, up to a minute. The other lane's last processes and the test databases' drops wind down
    // for a while after it ends: a CI run measured this job's first (fitted) steps at 0.66 s and
    // its later ones at 0.52 (load average 2.9 when it started), outside the 20%.
    await waitFor(
      'a quiet machine',
      async () => {
        for (let i = 0; i < 15; i++) {
          const runnable = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]!.split('/')[0]);
          if (runnable > 2) return false;
          await new Promise((r) => setTimeout(r, 200));
        }
        return true;
      },
      60_000,
    ).catch(() => undefined);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const spec = jobSpecSchema.parse({
      name: 'auto-plan',
      resources: { devices: 2 },
      workflow: {
        mode: 'auto',
        model: { preset: 'small' },
        task: { name: 'addition', digits: 2 },
        steps: STEPS,
        promptsPerStep: 64,
        groupSize: 8,
        // Evaluation and checkpoints only at the end: the model does not price them yet (docs/planner.md).
        checkpointEvery: 1000,
        evalEvery: 1000,
        warmup: { maxSteps: 0 },
      },
    });
    const id = (await t.as(c.h.http.post('/v1/jobs')).send(spec).expect(201)).body.id as string;
    const job = await waitForStatus(c, t, id, ['succeeded', 'failed']);
    assert.equal(job.status, 'succeeded', job.error ?? '');
    const events = await eventsOf(c, t, id);

    // Placed with the plan the search predicts fastest from the prior (no profile yet): the same
    // inputs the round had (the spec's workload on 2 devices of 1 thread each).
    const placed = events.filter((e) => e.type === 'job.placed');
    assert.equal(placed.length, 1);
    const plan = placed[0]!.data.plan as { mode: string; microBatches: number; predictedStepSeconds: number };
    const w = workloadOf(spec.workflow);
    const expected = planJob({
      workload: w,
      devices: 2,
      maxDevices: 2,
      memoryPerDeviceBytes: null,
      profile: null,
    });
    assert.equal(plan.mode, expected.mode);
    assert.equal(plan.microBatches, expected.microBatches);
    assert.ok(Math.abs(plan.predictedStepSeconds / expected.predictedStepSeconds - 1) < 1e-9);
    const candidates = candidatePlans(costModelOf({ workload: w, profile: null }), w, 2);
    const fastest = Math.min(...candidates.map((x) => x.stepSeconds));
    assert.ok(
      Math.abs(plan.predictedStepSeconds / fastest - 1) < 1e-9,
      `placed at ${plan.predictedStepSeconds} s/step; candidates: ${candidates.map((x) => `${x.label} ${x.stepSeconds.toFixed(4)}`).join('; ')}`,
    );
    assert.equal((placed[0]!.data.placement as { mode: string }).mode, plan.mode);

    // The prediction after 5 profiled steps, recorded once for the placement.
    const fitted = events.filter((e) => e.type === 'job.plan_fitted');
    assert.equal(fitted.length, 1, 'one fitted prediction per placement');
    const f = fitted[0]!.data as {
      predictedStepSeconds: number;
      samples: number;
      confidence: number;
      remainingSteps: number;
      to: { mode: string };
    };
    assert.ok(f.samples >= 5 && f.confidence === 1, JSON.stringify(f));
    assert.equal(f.to.mode, plan.mode);
    const fittedAt = STEPS - f.remainingSteps;

    // Measured: the mean wall time of the steps after the fit up to the last (which evaluates and
    // checkpoints), from when each step's metrics arrived.
    const done = (await t.as(c.h.http.get(`/v1/jobs/${id}/metrics?name=reward_mean`)).expect(200)).body
      .data as {
      step: number;
      createdAt: string;
    }[];
    const at = new Map(done.map((m) => [m.step, Date.parse(m.createdAt) / 1000]));
    const from = fittedAt;
    const to = STEPS - 1;
    assert.ok(to - from >= 10, `the fit at step ${fittedAt} leaves at least 10 steps before the last`);
    const measured = (at.get(to)! - at.get(from)!) / (to - from);
    const error = f.predictedStepSeconds / measured - 1;
    // Each step's wall time (from when its metrics arrived), for a failure's reader.
    const walls = [...at.keys()]
      .sort((a, b) => a - b)
      .slice(1)
      .map((s) => `${s}:${(at.get(s)! - at.get(s - 1)!).toFixed(2)}`);
    console.log(`load average before the job ${load}; step wall seconds: ${walls.join(' ')}`);
    console.log(
      `auto plan ${plan.mode} m${plan.microBatches}: prior ${plan.predictedStepSeconds.toFixed(4)} s/step; fitted after ${f.samples} profiled steps ${f.predictedStepSeconds.toFixed(4)} s/step; measured steps ${from + 1}-${to} ${measured.toFixed(4)} s/step (${(100 * error).toFixed(1)}%)`,
    );
    assert.ok(
      Math.abs(error) <= 0.2,
      `predicted ${f.predictedStepSeconds} s/step, measured ${measured} s/step`,
    );
  },
);
