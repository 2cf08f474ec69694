// Rules the cluster simulator showed were missing (scheduler/sim): each test fails without its fix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy, kueueLikePolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import { T0, node, plan, queued, running, snapshot, tenant } from './builders.js';

describe('schedule(): devices counted on by a preemptor', () => {
  it('are not backfilled by a later job while its victims leave', () => {
    // a's 2-device job waits for b's leaving job; b's 1-device job must not take the free device,
    // or a never fits and preempts b again every round (seen as thousands of preemptions).
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('r1', 'b', 'n1', [0], { preemptRequestedAt: T0 - 5_000 })],
        queued: [
          queued('wide', 'a', { devices: 2, maxDevices: 2, queuedAt: T0 - 100_000 }),
          queued('narrow', 'b', { queuedAt: T0 - 50_000 }),
        ],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(
      d.place.map((p) => p.jobId),
      [],
    );
    assert.deepEqual(d.preempt, []);
  });
});

describe('schedule(): time-share groups are whole', () => {
  const idle = plan({ busyFraction: 0.3, devicesMin: 2, devicesMax: 2 });
  it('never puts a job on part of a wider job’s devices', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('r2', 'a', 'n1', [0, 1], { plan: idle })],
        queued: [
          queued('one', 'b', {
            profile: { stepSeconds: 10, busySeconds: 3.2, switchSeconds: 0.2, peakBytes: 1, samples: 10 },
          }),
        ],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(d.place, []);
  });

  it('shares a group whose jobs hold exactly the devices it wants', () => {
    const profile = { stepSeconds: 10, busySeconds: 3.2, switchSeconds: 0.2, peakBytes: 1, samples: 10 };
    const base = {
      nodes: [node('n1', 2)],
      tenants: [tenant('a'), tenant('b')],
      queued: [queued('two', 'b', { devices: 2, maxDevices: 2, profile })],
    };
    const aligned = schedule(
      snapshot({ ...base, running: [running('r2', 'a', 'n1', [0, 1], { plan: idle })] }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(
      aligned.place.map((p) => [p.jobId, p.devices, p.sharedWith]),
      [['two', [0, 1], 2]],
    );
    // Two different one-device jobs: joining both would chain three jobs through one lock.
    const one = plan({ busyFraction: 0.3 });
    const split = schedule(
      snapshot({
        ...base,
        running: [running('x', 'a', 'n1', [0], { plan: one }), running('y', 'a', 'n1', [1], { plan: one })],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(split.place, []);
  });
});
