// Spreading out once nobody waits (spread.ts): a job slowed by its time-share partners moves to free
// devices with notice, as a `spread` move to devices kept for it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import type { RunningJob } from '../types.js';
import { T0, node, plan, queued, running, snapshot, tenant } from './builders.js';

const policy = { ...defaultPolicy, spreadWhenIdle: true };
/** Two jobs 80% busy on device 0 of n1 (load 1.6 and switches: each slowed by more than 1.6×). */
const crowded = (over: Partial<RunningJob> = {}) => [
  running('r1', 'a', 'n1', [0], { plan: plan({ busyFraction: 0.8 }), steps: 10_000, stepsDone: 0, ...over }),
  running('r2', 'b', 'n1', [0], { plan: plan({ busyFraction: 0.8 }), steps: 10_000, stepsDone: 0, ...over }),
];
const world = (
  runningJobs: RunningJob[],
  extra: Parameters<typeof snapshot>[0]['queued'] = [],
  nodes = [node('n1', 2)],
) => snapshot({ nodes, tenants: [tenant('a'), tenant('b')], running: runningJobs, queued: extra });

describe('schedule(): spreading out once nobody waits', () => {
  it('moves one job of a crowded device to a free one, to devices kept for it', () => {
    const d = schedule(world(crowded()), policy, T0);
    assert.equal(d.preempt.length, 1, 'one move relieves both');
    const m = d.preempt[0]!;
    assert.equal(m.reason, 'spread');
    assert.equal(m.forJobId, m.jobId);
    assert.deepEqual(m.moveTo, { nodeId: 'n1', devices: [1] });
    // While it checkpoints, its new device is held: a queued job does not take it.
    const moving = crowded().map((r) =>
      r.id === m.jobId
        ? {
            ...r,
            preemptRequestedAt: T0,
            preemptReason: 'spread' as const,
            returnTo: m.moveTo!,
            preemptFor: r.id,
          }
        : r,
    );
    const next = schedule(world(moving, [queued('q', 'a')]), policy, T0 + 1000);
    assert.ok(!next.place.some((p) => p.jobId === 'q' && p.devices.includes(1)));
    assert.deepEqual(next.preempt, []);
  });

  it('moves nobody while a job waits for devices, off, or before the minimum run time', () => {
    const wide = queued('wide', 'a', { devices: 2, maxDevices: 2 });
    const waiting = schedule(world(crowded(), [wide]), policy, T0);
    assert.equal(waiting.queue[0]?.jobId, 'wide');
    assert.deepEqual(waiting.preempt, []);
    // A job no node holds waits for no device: it does not keep the crowded jobs crowded.
    const never = schedule(
      world(crowded(), [queued('never', 'a', { devices: 4, maxDevices: 4 })]),
      policy,
      T0,
    );
    assert.equal(never.queue[0]?.waitReason, 'unschedulable');
    assert.deepEqual(
      never.preempt.map((p) => p.reason),
      ['spread'],
    );
    assert.deepEqual(schedule(world(crowded()), defaultPolicy, T0).preempt, [], 'off by default');
    assert.deepEqual(schedule(world(crowded({ placedAt: T0 - 30_000 })), policy, T0).preempt, []);
  });

  it('moves nobody when the move would not pay: light partners, or few steps left', () => {
    const light = crowded().map((r) => ({ ...r, plan: plan({ busyFraction: 0.3 }) }));
    assert.deepEqual(schedule(world(light), policy, T0).preempt, [], 'load under 1: nobody slowed');
    // 10 steps of 10 s slowed by ~0.7×: ~70 s saved, under 10× the move's cost (restart + grace).
    assert.deepEqual(schedule(world(crowded({ stepsDone: 9_990 })), policy, T0).preempt, []);
  });

  it('keeps a whole free node whole for a wide job', () => {
    const d = schedule(world(crowded(), [], [node('n1', 1), node('n2', 4)]), policy, T0);
    assert.deepEqual(d.preempt, []);
    const partly = schedule(
      world([...crowded(), running('r3', 'a', 'n2', [0])], [], [node('n1', 1), node('n2', 4)]),
      policy,
      T0,
    );
    assert.deepEqual(
      partly.preempt.map((p) => [p.reason, p.moveTo?.nodeId]),
      [['spread', 'n2']],
    );
  });
});
