/**
 * Re-planning in the round (schedule(), pure): a running `auto` job whose profile now favours
 * another plan is moved only when the predicted gain over its remaining steps beats the move's
 * cost, in place (its devices come back to it first, so also where others wait), and only to a plan
 * those devices can take back beside the jobs sharing them; each decision is
 * recorded once per shift of the prediction; after a move the measured gain is recorded once the
 * new placement has run 5 steps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy } from '../../core/policy.js';
import { schedule } from '../../core/schedule.js';
import { T0, node, plan, queued, running, snapshot, tenant, workload } from '../../core/test/builders.js';
import type { ProfileSummary, RunningJob } from '../../core/types.js';
import { planJob } from '../plan-job.js';
import { MIN_STEP_GAIN, type ReplanInput } from '../replan.js';

const w = workload({ mode: 'auto', microBatches: 1, maxWeightLag: 1 });
/** Five profiled temporal steps on 2 devices: generation 50 ms, training 400 ms. */
const profile: ProfileSummary = {
  stepSeconds: 0.47,
  busySeconds: 0.456,
  switchSeconds: 0.006,
  peakBytes: 1e7,
  samples: 6,
  stages: [
    { stage: 'generate', batch: 512, devices: 2, computeSeconds: 0.05, switchSeconds: 0, count: 6 },
    { stage: 'train', batch: 512, devices: 2, computeSeconds: 0.4, switchSeconds: 0.006, count: 6 },
  ],
};
const best = planJob({ workload: w, devices: 2, maxDevices: 2, memoryPerDeviceBytes: null, profile });

function job(over: Partial<RunningJob> = {}, replan: Partial<ReplanInput> = {}): RunningJob {
  return running('r', 'a', 'n1', [0, 1], {
    // It runs a plan of another shape that is slower than the best by `slowdown`.
    plan: plan({
      devicesMin: 2,
      mode: best.mode === 'temporal' ? 'spatial' : 'temporal',
      generateDevices: 1,
      trainDevices: 1,
      stepSeconds: best.stepSeconds * 3,
      predictedStepSeconds: best.predictedStepSeconds * 3,
      switchSeconds: 0.006,
      hostBytes: 6.4e6,
    }),
    stepsDone: 10,
    steps: 1000,
    replan: { workload: w, profile, last: null, sincePlaced: null, ...replan },
    ...over,
  });
}

const round = (r: RunningJob, queue = false) =>
  schedule(
    snapshot({
      nodes: [node('n1', 2)],
      tenants: [tenant('a')],
      running: [r],
      queued: queue ? [queued('q', 'a', { devices: 3, maxDevices: 3 })] : [],
    }),
    defaultPolicy,
    T0,
  );

describe('re-planning', () => {
  it('moves a job when the gain over its remaining steps beats the move', () => {
    const d = round(job());
    assert.equal(d.replan.length, 1);
    const r = d.replan[0]!;
    assert.equal(r.kind, 'move');
    assert.ok(r.predictedGainSeconds > r.moveCostSeconds);
    assert.equal(r.to.mode, best.mode);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason]),
      [['r', 'replan']],
    );
  });

  it('declines, and records it, when the job is too close to its end for the move to pay', () => {
    const d = round(job({ stepsDone: 999 }));
    assert.equal(d.replan[0]?.kind, 'decline');
    assert.equal(d.replan[0]!.reason, 'does_not_pay');
    assert.ok(d.replan[0]!.predictedGainSeconds <= d.replan[0]!.moveCostSeconds);
    assert.equal(d.preempt.length, 0);
  });

  it('declines a move its devices could not take back beside the job sharing them in time', () => {
    // The new plan is busier (96% of each step on its devices): under a group-load bound of 1.6,
    // beside a partner busy 70% of its steps the group would want 1.67 of the devices' time, over
    // the bound, so the job could not come back to them and would lose its devices and its place.
    const beside = (busyFraction: number) =>
      schedule(
        snapshot({
          nodes: [node('n1', 2)],
          tenants: [tenant('a'), tenant('b')],
          running: [
            job(),
            running('p', 'b', 'n1', [0, 1], {
              plan: plan({ devicesMin: 2, busyFraction, switchSeconds: 0 }),
            }),
          ],
          queued: [],
        }),
        { ...defaultPolicy, maxGroupLoad: 1.6 },
        T0,
      );
    const busy = beside(0.7);
    assert.equal(busy.replan[0]?.kind, 'decline');
    assert.equal(busy.replan[0]!.reason, 'shared_devices');
    assert.ok(busy.replan[0]!.predictedGainSeconds > busy.replan[0]!.moveCostSeconds, 'it would pay');
    assert.equal(busy.preempt.length, 0);
    const light = beside(0.5);
    assert.equal(light.replan[0]?.kind, 'move');
    assert.deepEqual(
      light.preempt.map((p) => [p.jobId, p.reason]),
      [['r', 'replan']],
    );
  });

  it('moves a job in place while others wait: nobody claims its devices, and they come back to it first', () => {
    const d = round(job(), true);
    assert.equal(d.replan[0]?.kind, 'move');
    assert.ok(d.preempt.some((p) => p.jobId === 'r' && p.reason === 'replan'));

    // While it checkpoints, an aged job that wants its 2 devices does not claim them.
    const aged = queued('q', 'a', { devices: 2, maxDevices: 2, queuedAt: T0 - 5 * 3600_000 });
    const leaving = job({ preemptRequestedAt: T0 - 1000, preemptReason: 'replan' });
    const during = schedule(
      snapshot({ nodes: [node('n1', 2)], tenants: [tenant('a')], running: [leaving], queued: [aged] }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual([during.place, during.preempt], [[], []]);

    // Requeued, it is placed on the same devices with its new plan before the aged job.
    const back = queued('r', 'a', {
      devices: 2,
      maxDevices: 2,
      workload: w,
      profile,
      requeueReason: 'preempted',
      returnTo: { nodeId: 'n1', devices: [1, 0] },
    });
    // (One job per device: the aged job would otherwise join it as a time-share partner.)
    const after = schedule(
      snapshot({ nodes: [node('n1', 2)], tenants: [tenant('a')], running: [], queued: [aged, back] }),
      { ...defaultPolicy, maxJobsPerDevice: 1 },
      T0 + 30_000,
    );
    assert.deepEqual(
      after.place.map((p) => [p.jobId, p.nodeId, p.devices, p.mode]),
      [['r', 'n1', [0, 1], best.mode]],
    );
  });

  it("takes no decision for a plan predicted less than 15% faster (within the model's error)", () => {
    const close = (factor: number) =>
      job({
        plan: { ...job().plan, stepSeconds: best.stepSeconds * factor },
      });
    assert.equal(round(close(1 / (1 - MIN_STEP_GAIN) - 0.01)).replan.length, 0);
    assert.equal(round(close(1 / (1 - MIN_STEP_GAIN) + 0.01)).replan[0]?.kind, 'move');
  });

  it('decides once per shift of the prediction, and never for an explicit mode or a young placement', () => {
    const last = {
      kind: 'decline' as const,
      at: T0 - 1000,
      predictedStepSeconds: best.stepSeconds,
      beforeStepSeconds: 1,
    };
    assert.equal(round(job({}, { last })).replan.length, 0);
    const shifted = { ...last, predictedStepSeconds: best.stepSeconds * 2 };
    assert.equal(round(job({}, { last: shifted })).replan.length, 1);
    assert.equal(round(job({}, { workload: { ...w, mode: 'temporal' } })).replan.length, 0);
    assert.equal(round(job({ placedAt: T0 - 10_000 })).replan.length, 0, 'within its minimum run time');
    assert.equal(
      round(job({}, { profile: { ...profile, samples: 3 } })).replan.length,
      0,
      'too few profiled steps',
    );
  });

  it('records the measured gain once the moved job has run 5 steps in its new placement', () => {
    const last = {
      kind: 'move' as const,
      at: T0 - 120_000,
      predictedStepSeconds: 0.5,
      beforeStepSeconds: 1.5,
    };
    const placedAt = T0 - 60_000;
    assert.equal(
      round(job({ placedAt }, { last, sincePlaced: { steps: 4, stepSeconds: 0.6 } })).replan.length,
      0,
    );
    const d = round(job({ placedAt }, { last, sincePlaced: { steps: 5, stepSeconds: 0.6 } }));
    assert.equal(d.replan[0]?.kind, 'measured');
    assert.equal(d.replan[0]!.measuredStepSeconds, 0.6);
    assert.ok(Math.abs(d.replan[0]!.measuredGainSeconds! - 0.9 * 990) < 1e-6);
    assert.equal(d.preempt.length, 0);
  });

  it('records the prediction fitted to 5 profiled steps once per placement, whatever the mode', () => {
    const fitted = (r: RunningJob) => round(r).replan.filter((d) => d.kind === 'fitted');
    const same = { mode: 'temporal' as const };
    const ran = (steps: number, recorded = false) =>
      job(
        { plan: { ...best, ...same } },
        { workload: { ...w, ...same }, sincePlaced: { steps, stepSeconds: 0.5 }, fitted: recorded },
      );
    assert.equal(fitted(ran(4)).length, 0, 'before 5 steps in the placement');
    const [f] = fitted(ran(5));
    assert.equal(f?.predictedStepSeconds, best.stepSeconds);
    assert.equal(f?.to.mode, best.mode);
    assert.equal(f?.samples, profile.samples);
    assert.equal(f?.confidence, best.confidence);
    assert.equal(fitted(ran(9, true)).length, 0, 'once per placement');
    const off = schedule(
      snapshot({ nodes: [node('n1', 2)], tenants: [tenant('a')], running: [ran(5)], queued: [] }),
      { ...defaultPolicy, replanning: false },
      T0,
    );
    assert.deepEqual(
      off.replan.map((d) => d.kind),
      ['fitted'],
      're-planning off still records it',
    );
  });

  it("leaves a spatial job's split to the worker's reactive balancer", () => {
    // Neither stage gets faster with devices, so pipelining wins: spatial 2/2 on 4 devices.
    const flat = (stage: string, devices: number, seconds: number, batch = 512) => ({
      stage,
      batch,
      devices,
      computeSeconds: seconds,
      switchSeconds: 0.001,
      count: 6,
    });
    const p4: ProfileSummary = {
      ...profile,
      stages: [1, 2, 4].flatMap((n) => [flat('generate', n, 0.3), flat('train', n, 0.3)]),
    };
    const input = { workload: w, devices: 4, maxDevices: 4, memoryPerDeviceBytes: null, profile: p4 };
    const best4 = planJob(input);
    assert.deepEqual([best4.mode, best4.generateDevices, best4.trainDevices], ['spatial', 2, 2]);
    const at = (split: { generate: number; train: number }) =>
      planJob({ ...input, workload: { ...w, mode: 'spatial', microBatches: best4.microBatches }, split });
    const rebalanced = at({ generate: 3, train: 1 });
    assert.deepEqual([rebalanced.generateDevices, rebalanced.trainDevices], [3, 1], 'costed at its split');
    assert.ok(rebalanced.stepSeconds > best4.stepSeconds);
    const r4 = (p: typeof best4) =>
      schedule(
        snapshot({
          nodes: [node('n1', 4)],
          tenants: [tenant('a')],
          running: [job({ devices: [0, 1, 2, 3], plan: p }, { profile: p4 })],
          queued: [],
        }),
        defaultPolicy,
        T0,
      );
    assert.equal(r4(rebalanced).replan.length, 0, 'another split alone is not a re-plan');
    const temporal = planJob({ ...input, workload: { ...w, mode: 'temporal' } });
    assert.equal(r4(temporal).replan[0]?.to.mode, 'spatial', 'another mode still is');
  });
});
