/**
 * An `auto` job whose fastest plan is a split takes a time-share group with its temporal plan
 * instead, when a group takes it and that plan wants less of the devices' time per step (a split's
 * generator, busy all the time, takes no partner); free devices still go to the fastest plan.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { switchFraction } from '../cluster.js';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import { planJob } from '../../planner/plan-job.js';
import type { JobPlan, ProfileSummary } from '../types.js';
import { T0, node, plan, queued, running, snapshot, tenant, workload } from './builders.js';

// Partial rollouts off: the split is what hides generation's tail here.
const w = workload({ mode: 'auto', microBatches: 1, maxWeightLag: 1, partialTail: 0 });

/** Six profiled steps of 1 s on 2 devices: generation `gen` s (30% of it stragglers), training `train` s. */
function measured(gen: number, train: number): ProfileSummary {
  const stage = (name: string, devices: number, seconds: number, occupancy?: number) => ({
    stage: name,
    batch: 512,
    devices,
    computeSeconds: (seconds * 2) / devices,
    switchSeconds: 0.001,
    count: 6,
    ...(occupancy ? { occupancy } : {}),
  });
  return {
    stepSeconds: 1,
    busySeconds: gen + train,
    switchSeconds: 0.002,
    peakBytes: 1e7,
    samples: 6,
    stages: [1, 2].flatMap((n) => [stage('generate', n, gen, 0.7), stage('train', n, train)]),
  };
}

const deviceTime = (p: JobPlan) => p.stepSeconds * (p.busyFraction + switchFraction(p));
const plans = (profile: ProfileSummary) => {
  // The builders' devices have 2 engine threads each, as the round prices them.
  const input = {
    workload: w,
    devices: 2,
    maxDevices: 2,
    memoryPerDeviceBytes: null,
    profile,
    threadsPerDevice: 2,
  };
  return { best: planJob(input), temporal: planJob({ ...input, workload: { ...w, mode: 'temporal' } }) };
};

/**
 * A 2-device job of another tenant alone on n1's two devices, busy 65% of its steps: under a
 * group-load bound of 1.6 a split busy all the time would overload them (1.65 > 1.6), a temporal
 * plan busy ~60% would not.
 */
const partner = running('p', 'b', 'n1', [0, 1], {
  plan: plan({ devicesMin: 2, busyFraction: 0.65, switchSeconds: 0 }),
});

const round = (profile: ProfileSummary, nodes = [node('n1', 2)]) =>
  schedule(
    snapshot({
      nodes,
      tenants: [tenant('a'), tenant('b')],
      running: [partner],
      queued: [queued('q', 'a', { devices: 2, maxDevices: 2, workload: w, profile })],
    }),
    { ...defaultPolicy, maxGroupLoad: 1.6 },
    T0,
  );

describe('schedule(): an auto job shares devices with its temporal plan where that costs less', () => {
  it('joins a time-share group temporally rather than wait for devices its split would hold alone', () => {
    const profile = measured(0.4, 0.2);
    const { best, temporal } = plans(profile);
    assert.equal(best.mode, 'spatial');
    assert.ok(best.busyFraction > 0.95, 'the split keeps a device busy all the time');
    assert.ok(deviceTime(temporal) < deviceTime(best));
    const d = round(profile);
    assert.deepEqual(
      d.place.map((p) => [p.jobId, p.nodeId, p.devices, p.mode, p.sharedWith]),
      [['q', 'n1', [0, 1], 'temporal', 2]],
    );
    assert.equal(d.place[0]!.plan.stepSeconds, temporal.stepSeconds);
  });

  it('waits for its split when the temporal plan would take more device time per step', () => {
    const profile = measured(0.6, 0.2);
    const { best, temporal } = plans(profile);
    assert.equal(best.mode, 'spatial');
    assert.ok(deviceTime(temporal) > deviceTime(best));
    const d = round(profile);
    assert.deepEqual(d.place, []);
    assert.equal(d.queue[0]?.waitReason, 'capacity');
  });

  it('takes free devices with the fastest plan', () => {
    const d = round(measured(0.4, 0.2), [node('n1', 2), node('n2', 2)]);
    assert.deepEqual(
      d.place.map((p) => [p.jobId, p.nodeId, p.mode, p.sharedWith]),
      [['q', 'n2', 'spatial', 0]],
    );
  });
});
