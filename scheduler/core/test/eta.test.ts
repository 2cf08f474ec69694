// The estimate's replay of the queue (estimateQueue): a job waits for a node with its width in
// devices free; under time-sharing it may instead join a job alone on devices of its width whose
// load admits it, and keep its devices after that job ends if nobody else was promised them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateQueue, type JoinHost, type Waiting } from '../eta.js';
import { defaultPolicy } from '../policy.js';
import type { JobPlan } from '../types.js';
import { T0, plan, queued } from './builders.js';

// 100 steps of 10 s: 1,000 s alone; half busy, no switches (two of them load a device 1.0).
const half = plan({ busyFraction: 0.5, switchSeconds: 0 });
const busy = plan({ busyFraction: 0.95, switchSeconds: 0 });
const waiting = (id: string, p: JobPlan, over: Partial<Waiting['job']> = {}): Waiting => ({
  job: queued(id, 'a', over),
  plan: p,
  reason: 'capacity',
  notBefore: 0,
});
/**
 * Each job's estimated start in seconds from T0 on nodes whose devices free at `freeAt` (one list
 * per node), with joins into `hosts` when given (time-sharing).
 */
/** The bound these joins are written against. */
const GROUP_LOAD_1_6 = { ...defaultPolicy, maxGroupLoad: 1.6 };
const estimate = (freeAt: number[][], q: Waiting[], hosts?: JoinHost[]) =>
  starts(estimateQueue('default', freeAt, q, T0, hosts ? { hosts, policy: GROUP_LOAD_1_6 } : undefined));
const starts = (views: ReturnType<typeof estimateQueue>) =>
  Object.fromEntries(
    views.map((v) => [v.jobId, v.estimatedStartAt === null ? null : (v.estimatedStartAt - T0) / 1000]),
  );

describe('estimateQueue', () => {
  it('starts a job where a node has its width in devices free, and the jobs behind it beside it', () => {
    // Two nodes, each with 4 devices free now and 4 busy for 5,000 s: 8 devices are free, but not
    // on one node. The 8-device job waits for a node; the 1-device job behind it starts now.
    const node = [T0, T0, T0, T0, T0 + 5_000_000, T0 + 5_000_000, T0 + 5_000_000, T0 + 5_000_000];
    const wide = waiting('wide', plan({ devicesMin: 8 }));
    assert.deepEqual(estimate([node, node], [wide, waiting('small', half)]), { wide: 5000, small: 0 });
    // Wider than any node: no estimate.
    assert.deepEqual(estimate([[T0, T0]], [waiting('w4', plan({ devicesMin: 4 }))]), { w4: null });
  });

  it('lets a queued job join a running job it may share with, and the next one after it', () => {
    // One device, held by a half-busy job for 5,000 s more.
    const host = { width: 1, node: 0, plan: half, from: T0, end: T0 + 5_000_000 };
    const q = [waiting('q1', half), waiting('q2', half)];
    assert.deepEqual(estimate([[T0 + 5_000_000]], q, [host]), { q1: 0, q2: 1000 });
    // Without the rule (no time-sharing): each waits for the device, then for the one before it.
    assert.deepEqual(estimate([[T0 + 5_000_000]], q), { q1: 5000, q2: 6000 });
  });

  it('does not join a job too busy to share', () => {
    // 0.95 + 0.8 is over the group-load bound (1.6).
    const tooBusy = { width: 1, node: 0, plan: busy, from: T0, end: T0 + 5_000_000 };
    const eighty = plan({ busyFraction: 0.8, switchSeconds: 0 });
    assert.deepEqual(estimate([[T0 + 5_000_000]], [waiting('q', eighty)], [tooBusy]), { q: 5000 });
  });

  it('joins a job that ends first and keeps its devices after it, alone and open to the next join', () => {
    // The host ends at 500 s; q (1,000 s alone, the pair at load 1.0 runs at full speed) joins at
    // once and has the device alone from 500 s to 1,000 s, where q2 joins it (alone from 1,000 s,
    // when q3 joins it in turn).
    const short = { width: 1, node: 0, plan: half, from: T0, end: T0 + 500_000 };
    const q = [waiting('q', half), waiting('q2', half), waiting('q3', busy)];
    assert.deepEqual(estimate([[T0 + 500_000]], q, [short]), { q: 0, q2: 500, q3: 1000 });
    // Without time-sharing, the same queue waits for the device one job after another.
    assert.deepEqual(estimate([[T0 + 500_000]], q), { q: 500, q2: 1500, q3: 2500 });
    // Slowed while shared: at load 1.5 its first 500 s do 333 s of its work, so it ends at 1,166.7 s.
    const slow = plan({ busyFraction: 1, switchSeconds: 0 });
    const host = { width: 1, node: 0, plan: half, from: T0, end: T0 + 500_000 };
    assert.deepEqual(estimate([[T0 + 500_000]], [waiting('s', slow), waiting('next', busy)], [host]), {
      s: 0,
      next: 1166.667,
    });
  });

  it('does not keep devices the replay already promised to a job before it', () => {
    // The host (95% busy) ends at 500 s. q1, too busy to join it, takes the device when free, from
    // 500 to 1,500 s; q2 may join the host only if it ends by 500 s (it would keep q1's device): it
    // joins q1 instead, at 500 s.
    const host = { width: 1, node: 0, plan: busy, from: T0, end: T0 + 500_000 };
    const q = [waiting('q1', plan({ busyFraction: 0.8, switchSeconds: 0 })), waiting('q2', half)];
    assert.deepEqual(estimate([[T0 + 500_000]], q, [host]), { q1: 500, q2: 500 });
  });

  it('holds nothing for a job held back until later: the jobs behind it start meanwhile', () => {
    // q1 may not start before 600 s (crash back-off): the round skips it until then, so q2 joins
    // the host now (the device is promised to nobody before 600 s), and q1 joins q2 at 600 s.
    const host = { width: 1, node: 0, plan: half, from: T0, end: T0 + 500_000 };
    const q1 = { ...waiting('q1', half), notBefore: T0 + 600_000 };
    assert.deepEqual(estimate([[T0 + 500_000]], [q1, waiting('q2', half)], [host]), { q1: 600, q2: 0 });
    // Its quota holds a 2-device job back for 100,000 s: a 1-device job behind it starts now on one
    // of the two free devices (told 101,000 s before, behind the held job's whole run), and the held
    // one at its time; with no time-sharing too.
    const heldBack = { ...waiting('held', plan({ devicesMin: 2 })), notBefore: T0 + 100_000_000 };
    assert.deepEqual(estimate([[T0, T0]], [heldBack, waiting('small', plan({}))]), {
      held: 100_000,
      small: 0,
    });
    // Still first at its time: a job behind it that would start after it waits for it.
    const soon = { ...waiting('soon', plan({ devicesMin: 2 })), notBefore: T0 + 100_000 };
    const long = plan({ devicesMin: 2 });
    assert.deepEqual(estimate([[T0 + 200_000, T0 + 200_000]], [soon, waiting('after', long)]), {
      soon: 200,
      after: 1200,
    });
  });

  it('joins only a job of its own width, and one the replay started alone before it', () => {
    // Two free devices: w2 starts on them now; the 1-device job may not join a 2-device group and
    // waits for w2's end; the next 2-device job joins w2 at once.
    const q = [
      waiting('w2', plan({ busyFraction: 0.5, switchSeconds: 0, devicesMin: 2 })),
      waiting('w1', half),
      waiting('w2b', plan({ busyFraction: 0.5, switchSeconds: 0, devicesMin: 2 })),
    ];
    assert.deepEqual(estimate([[T0, T0]], q, []), {
      w2: 0,
      w1: 1000,
      w2b: 0,
    });
  });

  it("a partner's end opens its host to a join", () => {
    // The device's two jobs end at 300 s and 5,000 s: from 300 s the longer one is alone.
    const host = { width: 1, node: 0, plan: half, from: T0 + 300_000, end: T0 + 5_000_000 };
    assert.deepEqual(estimate([[T0 + 5_000_000]], [waiting('q', half)], [host]), { q: 300 });
  });
});
