// Table-driven tests of the round, one rule each: schedule(snapshot, policy, now) → decisions.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy, exclusiveFifoPolicy, kueueLikePolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import type { Decisions, Policy, RunningJob } from '../types.js';
import { T0, node, plan, queued, running, snapshot, tenant, workload } from './builders.js';

const GiB = 1024 ** 3;
const placedIds = (d: Decisions) => d.place.map((p) => p.jobId).sort();
const view = (d: Decisions, id: string) => d.queue.find((q) => q.jobId === id);

describe('schedule(): placement', () => {
  it('places on free devices first, best fit, and never on two nodes', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4), node('n2', 2)],
        tenants: [tenant('a')],
        running: [running('r1', 'a', 'n1', [0])],
        queued: [
          queued('q1', 'a', { devices: 2, maxDevices: 2 }),
          queued('q2', 'a', { devices: 3, maxDevices: 3 }),
        ],
      }),
      defaultPolicy,
      T0,
    );
    const q1 = d.place.find((p) => p.jobId === 'q1')!;
    const q2 = d.place.find((p) => p.jobId === 'q2')!;
    assert.equal(q1.nodeId, 'n2', 'the node with exactly the free devices wanted');
    assert.deepEqual(q2.devices, [1, 2, 3]);
    assert.equal(q2.nodeId, 'n1');
    assert.equal(q1.sharedWith + q2.sharedWith, 0);
  });

  it('time-shares a device when the group load and switch share stay within bounds', () => {
    const s = snapshot({
      nodes: [node('n1', 1)],
      tenants: [tenant('a'), tenant('b')],
      running: [running('r1', 'a', 'n1', [0], { plan: plan({ busyFraction: 0.5 }) })],
      queued: [queued('q1', 'b')],
    });
    const d = schedule(s, defaultPolicy, T0);
    assert.deepEqual(placedIds(d), ['q1']);
    assert.equal(d.place[0]!.sharedWith, 1);
    // The same job on a device whose group would be overloaded waits.
    const busy = { ...s, running: [running('r1', 'a', 'n1', [0], { plan: plan({ busyFraction: 0.95 }) })] };
    assert.deepEqual(placedIds(schedule(busy, { ...defaultPolicy, maxGroupLoad: 1.5 }, T0)), []);
    // Switches too costly against the step: refused.
    const costly = {
      ...s,
      running: [running('r1', 'a', 'n1', [0], { plan: plan({ busyFraction: 0.3, switchSeconds: 3 }) })],
    };
    assert.deepEqual(placedIds(schedule(costly, defaultPolicy, T0)), []);
    // Without time-sharing (Kueue-like): never shared.
    assert.deepEqual(placedIds(schedule(s, kueueLikePolicy, T0)), []);
  });

  it('protectOwnerDevices: a borrowing job does not time-share the devices of a tenant within its entitlement', () => {
    // Two tenants entitled to a device each: a's job alone on device 0 (busy 50%), b's on device 1
    // (busy 70%). b's next job would borrow: it may join b's own device, not a's, although a's
    // is the less loaded.
    const s = snapshot({
      nodes: [node('n1', 2)],
      tenants: [tenant('a'), tenant('b')],
      running: [
        running('ra', 'a', 'n1', [0], { plan: plan({ busyFraction: 0.5 }) }),
        running('rb', 'b', 'n1', [1], { plan: plan({ busyFraction: 0.7 }) }),
      ],
      queued: [queued('qb', 'b')],
    });
    // At a group-load bound of 1.6, b's job on the prior (80% busy) fits beside 70%, not 98%.
    const policy = { ...defaultPolicy, maxGroupLoad: 1.6, protectOwnerDevices: true };
    const d = schedule(s, policy, T0);
    assert.deepEqual(placedIds(d), ['qb']);
    assert.deepEqual(d.place[0]!.devices, [1]);
    assert.equal(d.place[0]!.sharedWith, 1);
    // With its own device too busy to join, it waits rather than halve a's device.
    const busy = {
      ...s,
      running: [s.running[0]!, running('rb', 'b', 'n1', [1], { plan: plan({ busyFraction: 0.98 }) })],
    };
    assert.deepEqual(placedIds(schedule(busy, policy, T0)), []);
    // Off (the default), it joins the less loaded device.
    assert.deepEqual(schedule(s, defaultPolicy, T0).place[0]!.devices, [0]);
    // a's own job, within a's entitlement, joins a's device.
    const own = { ...busy, queued: [queued('qa', 'a')] };
    assert.deepEqual(schedule(own, policy, T0).place[0]!.devices, [0]);
  });

  it('honours device memory, host memory and memoryPerDeviceMiB', () => {
    const small = node('n1', 1, { devices: [{ index: 0, memoryBytes: 2 * GiB, threads: 1 }] });
    const d = schedule(
      snapshot({
        nodes: [small],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('big', 'a', { memoryPerDeviceBytes: 4 * GiB })],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), []);
    assert.equal(view(d, 'big')!.waitReason, 'unschedulable');
    const tightHost = node('n1', 2, { hostMemoryBytes: GiB + 1024 });
    const d2 = schedule(
      snapshot({
        nodes: [tightHost],
        tenants: [tenant('a')],
        running: [running('r', 'a', 'n1', [0])],
        queued: [queued('q', 'a')],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(placedIds(d2), [], 'host memory cannot hold both offloaded states');
  });

  it('lets a job grow into idle devices up to maxDevices when nobody waits', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('q', 'a', { devices: 1, maxDevices: 3 })],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(d.place[0]!.devices, [0, 1, 2]);
    const d2 = schedule(
      snapshot({
        nodes: [node('n1', 2)],
        tenants: [tenant('a')],
        running: [],
        queued: [
          queued('q', 'a', { devices: 1, maxDevices: 3 }),
          queued('other', 'a', { devices: 2, maxDevices: 2 }),
        ],
      }),
      defaultPolicy,
      T0,
    );
    assert.equal(d2.place.find((p) => p.jobId === 'q')!.devices.length, 1, 'no growth while a job waits');
  });

  it('splits a spatial job between generation and training in the placement', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('s', 'a', { devices: 4, maxDevices: 4, workload: workload({ mode: 'spatial' }) })],
      }),
      defaultPolicy,
      T0,
    );
    // Training costs several times generation per sequence (cost model prior), so the planner
    // gives it the larger, disjoint share of the devices.
    assert.equal(d.place[0]!.mode, 'spatial');
    assert.deepEqual(d.place[0]!.stages, { generate: [0], train: [1, 2, 3] });
    assert.equal(d.place[0]!.plan.generateDevices + d.place[0]!.plan.trainDevices, 4);
  });

  it('keeps pools independent', () => {
    const nodes = [node('g1', 1, { pool: 'gpu' })];
    const queuedJobs = [
      ...Array.from({ length: 500 }, (_, i) => queued(`cpu-${i}`, 'a', { pool: 'nowhere' })),
      queued('gpu-job', 'a', { pool: 'gpu' }),
    ];
    const d = schedule(
      snapshot({ nodes, tenants: [tenant('a')], running: [], queued: queuedJobs }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), ['gpu-job']);
    assert.equal(view(d, 'cpu-0')!.estimatedStartAt, null, 'a pool with no devices has no estimate');
  });
});

describe('schedule(): quotas and order', () => {
  it('never exceeds concurrent devices or monthly device-hours', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 8)],
        tenants: [
          tenant('a', { maxConcurrentDevices: 3 }),
          tenant('b', { deviceHoursPerMonth: 1, periodDeviceSeconds: 3600 }),
        ],
        running: [running('r', 'a', 'n1', [0])],
        queued: [queued('a1', 'a', { devices: 2, maxDevices: 2 }), queued('a2', 'a'), queued('b1', 'b')],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), ['a1']);
    assert.equal(view(d, 'a2')!.waitReason, 'quota');
    assert.equal(view(d, 'b1')!.waitReason, 'quota');
  });

  it('says a job no node can hold is unschedulable, with no estimate, even of a tenant at its share', () => {
    // a holds 2 of 4 devices, its share against b; its 8-device job and its job of 32 GiB a device
    // fit on no node (4 devices of 16 GiB), and its 1-device job is held by the share.
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a'), tenant('b')],
        running: [
          running('a0', 'a', 'n1', [0]),
          running('a1', 'a', 'n1', [1]),
          running('b0', 'b', 'n1', [2, 3]),
        ],
        queued: [
          queued('wide', 'a', { devices: 8, maxDevices: 8 }),
          queued('narrow', 'a'),
          queued('big-memory', 'a', { memoryPerDeviceBytes: 32 * 1024 ** 3 }),
        ],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), []);
    assert.equal(view(d, 'wide')!.waitReason, 'unschedulable');
    assert.equal(view(d, 'big-memory')!.waitReason, 'unschedulable');
    assert.equal(view(d, 'narrow')!.waitReason, 'fair_share');
    assert.equal(view(d, 'wide')!.estimatedStartAt, null);
    // Nor one whose memory per device no device has: its estimate was "in a second" every round.
    assert.equal(view(d, 'big-memory')!.estimatedStartAt, null);
    assert.equal(view(d, 'big-memory')!.estimatedEndAt, null);
    // A pool with no node at all (scaled to zero) waits for capacity: a node that comes may hold it.
    const empty = schedule(
      snapshot({
        nodes: [],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('wide', 'a', { devices: 8 })],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.equal(view(empty, 'wide')!.waitReason, 'capacity');
  });

  it('lets a job no node can hold hold up nobody: not a reservation past the aging bound, nor a share', () => {
    // b borrows 3 of 4 devices; a's aged 8-device job fits on no node. a's fresh job still reclaims
    // one (an aged job that does not fit blocks the jobs behind it from preempting), and a's demand
    // does not count the job no node holds: a is entitled to what its fresh job wants, not to half.
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a'), tenant('b')],
        running: [0, 1, 2, 3].map((i) => running(`b${i}`, 'b', 'n1', [i])),
        queued: [
          queued('wide', 'a', { devices: 8, maxDevices: 8, queuedAt: T0 - 2 * 3600_000 }),
          queued('a1', 'a'),
        ],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(
      d.preempt.map((p) => [p.tenantId, p.reason, p.forJobId]),
      [['b', 'reclaim', 'a1']],
    );
    assert.equal(d.shares.find((t) => t.tenantId === 'a')?.entitlement, 0.25);
    assert.equal(view(d, 'wide')!.waitReason, 'unschedulable');
  });

  it('orders tenants by weighted dominant share, not by arrival', () => {
    // a submitted 6 jobs first; b arrives later with 6; 4 devices: each gets 2.
    const jobs = [
      ...Array.from({ length: 6 }, (_, i) => queued(`a${i}`, 'a', { queuedAt: T0 - 100_000 + i })),
      ...Array.from({ length: 6 }, (_, i) => queued(`b${i}`, 'b', { queuedAt: T0 - 50_000 + i })),
    ];
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: [],
      queued: jobs,
    });
    const fair = schedule(s, kueueLikePolicy, T0);
    assert.deepEqual(placedIds(fair), ['a0', 'a1', 'b0', 'b1']);
    assert.equal(view(fair, 'b2')!.waitReason, 'fair_share', 'b holds its share');
    assert.equal(view(fair, 'a2')!.waitReason, 'fair_share');
    const fifo = schedule(s, exclusiveFifoPolicy, T0);
    assert.deepEqual(placedIds(fifo), ['a0', 'a1', 'a2', 'a3'], 'FIFO: whoever came first takes the pool');
    // Weight 3 against 1: three devices of four.
    const weighted = schedule(
      { ...s, tenants: [tenant('a'), tenant('b', { weight: 3 })] },
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(placedIds(weighted), ['a0', 'b0', 'b1', 'b2']);
  });

  it('puts priority first within a tenant and reports it as the reason', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a')],
        running: [],
        queued: [
          queued('low', 'a', { priority: 0, queuedAt: T0 - 9000 }),
          queued('high', 'a', { priority: 2 }),
        ],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), ['high']);
  });

  it('backs off a crash-looping job and says so', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('c', 'a', { requeueReason: 'crashed', attempts: 2, queuedAt: T0 - 1000 })],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), []);
    assert.equal(view(d, 'c')!.waitReason, 'crash_loop');
    assert.ok(view(d, 'c')!.estimatedStartAt! >= T0 + 9000, 'not before its back-off ends');
    const later = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('c', 'a', { requeueReason: 'crashed', attempts: 2, queuedAt: T0 - 11_000 })],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(placedIds(later), ['c']);
  });

  it('strict FIFO blocks the queue behind a job that does not fit; backfill does not', () => {
    const s = snapshot({
      nodes: [node('n1', 2)],
      tenants: [tenant('a')],
      running: [running('r', 'a', 'n1', [0])],
      queued: [queued('wide', 'a', { devices: 2, maxDevices: 2 }), queued('narrow', 'a')],
    });
    assert.deepEqual(placedIds(schedule(s, exclusiveFifoPolicy, T0)), []);
    assert.deepEqual(placedIds(schedule(s, kueueLikePolicy, T0)), ['narrow']);
  });

  it('gives positions and estimates that follow the queue', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a')],
        running: [running('r', 'a', 'n1', [0], { stepsDone: 90, steps: 100 })],
        queued: [queued('q1', 'a'), queued('q2', 'a')],
      }),
      kueueLikePolicy,
      T0,
    );
    const q1 = view(d, 'q1')!;
    const q2 = view(d, 'q2')!;
    assert.deepEqual([q1.position, q2.position, q1.tenantPosition, q2.tenantPosition], [1, 2, 1, 2]);
    assert.equal(q1.estimatedStartAt, T0 + 10 * 10_000, 'when r finishes its 10 remaining steps');
    assert.equal(q1.estimatedEndAt, q1.estimatedStartAt! + 100 * 10_000, 'its own 100 steps of 10 s');
    assert.equal(q2.estimatedStartAt, q1.estimatedEndAt, 'the device is next free when q1 ends');
    assert.equal(q2.estimatedEndAt, q2.estimatedStartAt! + 100 * 10_000);
  });

  it("estimates a preemptor's start when its victims' grace ends, not when they would have finished", () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a')],
        running: [running('low', 'a', 'n1', [0], { priority: 0, stepsDone: 0, steps: 1000 })],
        queued: [queued('urgent', 'a', { priority: 3 })],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(
      d.preempt.map((p) => p.jobId),
      ['low'],
    );
    assert.equal(view(d, 'urgent')!.estimatedStartAt, T0 + kueueLikePolicy.preemptGraceSeconds * 1000);
  });

  it('moves a job past the aging bound to the front of its pool', () => {
    const old = queued('old', 'a', { priority: 0, queuedAt: T0 - 2 * 3600_000 });
    const d = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a'), tenant('b')],
        running: [],
        queued: [queued('b-high', 'b', { priority: 3 }), old],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(placedIds(d), ['old']);
  });

  it('does not move an aged job of a borrowing tenant ahead of a tenant below its entitlement', () => {
    // a holds 3 of 4 devices against an entitlement of 2 (b wants 2): its aged job waits on its own
    // usage, and b's fresh job takes the free device.
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: [running('a0', 'a', 'n1', [0]), running('a1', 'a', 'n1', [1]), running('a2', 'a', 'n1', [2])],
      queued: [
        queued('a-old', 'a', { queuedAt: T0 - 2 * 3600_000 }),
        queued('b-new', 'b', { queuedAt: T0 - 2000 }),
        queued('b-next', 'b', { queuedAt: T0 - 1000 }),
      ],
    });
    const d = schedule(s, kueueLikePolicy, T0);
    assert.deepEqual(placedIds(d), ['b-new']);
    assert.equal(view(d, 'a-old')!.waitReason, 'fair_share');
    // Once a is no longer borrowing, its aged job goes first again.
    const fair = schedule({ ...s, running: s.running.slice(0, 1) }, kueueLikePolicy, T0);
    assert.deepEqual(
      fair.place.map((p) => p.jobId),
      ['a-old', 'b-new', 'b-next'],
    );
  });

  it('holds a reservation for an aged job that does not fit and backfills only jobs that end before it', () => {
    // 4 devices: r ends in 100 s on [0, 1], r2 in 10,000 s on [2], [3] is free. The aged job wants
    // 3, so it can start in 100 s; a 1-device job predicted to end by then may take [3], a longer
    // one may not (it would delay the aged job past its reservation).
    const plan10 = plan({ stepSeconds: 10 });
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a')],
        running: [
          running('r', 'a', 'n1', [0, 1], { plan: { ...plan10, devicesMin: 2 }, stepsDone: 90, steps: 100 }),
          running('r2', 'a', 'n1', [2], { plan: plan10, stepsDone: 0, steps: 1000 }),
        ],
        queued: [
          queued('old', 'a', { devices: 3, maxDevices: 3, queuedAt: T0 - 2 * 3600_000 }),
          queued('long', 'a', { queuedAt: T0 - 60_000, workload: workload({ steps: 10_000_000 }) }),
          queued('short', 'a', { queuedAt: T0 - 30_000, workload: workload({ steps: 5 }) }),
        ],
      }),
      { ...kueueLikePolicy, preemption: false },
      T0,
    );
    assert.deepEqual(placedIds(d), ['short']);
    assert.equal(view(d, 'long')!.waitReason, 'capacity');
    assert.equal(view(d, 'old')!.position, 1);
  });

  it('lends the devices an aged job waits for, and the aged job takes them back from the jobs placed on loan', () => {
    const plan10 = plan({ stepSeconds: 10 });
    const lending = { ...kueueLikePolicy, lendReservedDevices: true };
    const old = queued('old', 'a', { devices: 3, maxDevices: 3, queuedAt: T0 - 2 * 3600_000 });
    const before = T0 - 3 * 3600_000;
    const r = running('r', 'a', 'n1', [0, 1], {
      plan: { ...plan10, devicesMin: 2 },
      queuedAt: before,
      stepsDone: 90,
      steps: 100,
    });
    // Same pool as above: the long job would end after the aged job's reservation, yet starts on loan.
    const first = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a'), tenant('b')],
        running: [
          r,
          running('r2', 'a', 'n1', [2], { plan: plan10, queuedAt: before, stepsDone: 0, steps: 1000 }),
        ],
        queued: [
          old,
          queued('long', 'b', { queuedAt: T0 - 60_000, workload: workload({ steps: 10_000_000 }) }),
        ],
      }),
      lending,
      T0,
    );
    assert.deepEqual(placedIds(first), ['long']);

    // Later r has ended: the aged job fits if the loan comes back. r2, queued before the aged job,
    // is not a loan and stays.
    const later = T0 + 600_000;
    const loaned = running('long', 'b', 'n1', [3], {
      plan: plan10,
      queuedAt: T0 - 60_000,
      placedAt: T0,
      stepsDone: 1,
      steps: 10_000_000,
    });
    const r2 = running('r2', 'a', 'n1', [2], {
      plan: plan10,
      queuedAt: before,
      stepsDone: 60,
      steps: 1000,
    });
    // c holds two devices it had before the job aged (not a loan); a weighs 2, so 2 of 4 devices
    // are its entitlement.
    const cOwn = running('c-own', 'c', 'n1', [0, 1], {
      plan: { ...plan10, devicesMin: 2 },
      queuedAt: before,
    });
    const back = (policy: typeof lending, others: (typeof loaned)[], want = 3, aWeight = 1) =>
      schedule(
        snapshot({
          nodes: [node('n1', 4)],
          tenants: [tenant('a', { weight: aWeight }), tenant('b'), tenant('c')],
          running: [loaned, ...others],
          queued: [{ ...old, devices: want, maxDevices: want }],
        }),
        policy,
        later,
      ).preempt.map((p) => [p.jobId, p.reason, p.forJobId]);
    // a would hold its entitlement after the take-back: the loan comes back, although the share
    // rules alone would not allow it (b holds no more than its entitlement, and would hold less than a).
    assert.deepEqual(back(lending, [cOwn], 2, 2), [['long', 'aging', 'old']]);
    assert.deepEqual(back({ ...lending, lendReservedDevices: false }, [cOwn], 2, 2), []);
    // a would hold all 4 devices, over its entitlement, and b none: the lent device stays with b,
    // and the aged job waits for r2 to end (taken back, b would be owed the device and reclaim it).
    assert.deepEqual(back(lending, [r2]), []);
  });
});

describe('schedule(): preemption', () => {
  it("gives the devices a preemption frees to its preemptor, ahead of the victims' tenant's aged jobs", () => {
    // a holds its entitlement (1 of 2 devices; b wants the other), so its aged job is promoted.
    const s = (victim: Partial<Parameters<typeof queued>[2]>) =>
      snapshot({
        nodes: [node('n1', 2)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('a-run', 'a', 'n1', [0])],
        queued: [
          queued('a-old', 'a', { queuedAt: T0 - 2 * 3600_000 }),
          queued('a-victim', 'a', { requeueReason: 'preempted', preemptedFor: 'b1', ...victim }),
          queued('b1', 'b', { queuedAt: T0 - 300_000 }),
        ],
      });
    // The victim left 10 s ago, between rounds: the device it freed is b1's.
    assert.deepEqual(placedIds(schedule(s({ queuedAt: T0 - 10_000 }), kueueLikePolicy, T0)), ['b1']);
    // A minimum run time after the requeue the order is the fair one again.
    assert.deepEqual(placedIds(schedule(s({ queuedAt: T0 - 120_000 }), kueueLikePolicy, T0)), ['a-old']);

    // While the victim is still under notice, its preemptor claims its device first.
    const noticed = (preemptFor: string | null) =>
      schedule(
        snapshot({
          nodes: [node('n1', 3)],
          tenants: [tenant('a'), tenant('b'), tenant('c')],
          running: [
            running('a-run', 'a', 'n1', [0]),
            running('c-leaving', 'c', 'n1', [1], {
              preemptRequestedAt: T0 - 5_000,
              preemptReason: 'reclaim',
              preemptFor,
            }),
            running('c-run', 'c', 'n1', [2]),
          ],
          queued: [queued('a-old', 'a', { queuedAt: T0 - 2 * 3600_000 }), queued('b1', 'b')],
        }),
        kueueLikePolicy,
        T0,
      );
    assert.equal(view(noticed('b1'), 'b1')!.position, 1);
    assert.equal(view(noticed(null), 'a-old')!.position, 1);
  });

  it('gives no notice to a measured job predicted to end within the grace period, and waits for it', () => {
    const base = {
      nodes: [node('n1', 1)],
      tenants: [tenant('a')],
      queued: [queued('urgent', 'a', { priority: 3 })],
    };
    // 2 steps of 10 s left, the grace 30 s: it ends before a notice would free its device.
    const ending = (over: Partial<RunningJob>) =>
      schedule(
        snapshot({
          ...base,
          running: [running('low', 'a', 'n1', [0], { priority: 0, stepsDone: 98, ...over })],
        }),
        kueueLikePolicy,
        T0,
      );
    const d = ending({});
    assert.deepEqual(d.preempt, []);
    assert.equal(view(d, 'urgent')!.estimatedStartAt, T0 + 20_000);
    // The prior's guess is not trusted with it.
    assert.equal(ending({ plan: plan({ confidence: 0.4 }) }).preempt.length, 1);
  });

  it('preempts a lower-priority job of the same tenant, after its minimum run time only', () => {
    const base = {
      nodes: [node('n1', 1)],
      tenants: [tenant('a')],
      queued: [queued('urgent', 'a', { priority: 3 })],
    };
    const d = schedule(
      snapshot({ ...base, running: [running('low', 'a', 'n1', [0], { priority: 0 })] }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(d.preempt, [{ jobId: 'low', tenantId: 'a', reason: 'priority', forJobId: 'urgent' }]);
    assert.equal(view(d, 'urgent')!.waitReason, 'priority');
    const young = schedule(
      snapshot({
        ...base,
        running: [running('low', 'a', 'n1', [0], { priority: 0, placedAt: T0 - 10_000 })],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.deepEqual(young.preempt, [], 'inside its minimum run time');
    // Counted from when its run started, not from its placement: placed an hour ago, it may still
    // be waiting for its node (null) or have started 10 s ago.
    for (const runningSince of [null, T0 - 10_000]) {
      const late = schedule(
        snapshot({ ...base, running: [running('low', 'a', 'n1', [0], { priority: 0, runningSince })] }),
        kueueLikePolicy,
        T0,
      );
      assert.deepEqual(late.preempt, [], `run started ${String(runningSince)}`);
    }
    const ran = schedule(
      snapshot({
        ...base,
        running: [running('low', 'a', 'n1', [0], { priority: 0, runningSince: T0 - 60_000 })],
      }),
      kueueLikePolicy,
      T0,
    );
    assert.equal(ran.preempt.length, 1, 'a minimum run time after its run started');
  });

  it('of victims alike but for when they were placed, takes the one holding fewer devices where it makes room', () => {
    // A 1-device urgent job; the tenant's two jobs fill the node. The most recently placed holds
    // two devices: stopping it frees one the job does not need (QA: a 2-device job's run was taken
    // for a 1-device job). The older 1-device job makes room as well.
    const victims = (olderPriority: number, policy: Policy = { ...kueueLikePolicy, smallerVictims: true }) =>
      schedule(
        snapshot({
          nodes: [node('n1', 3)],
          tenants: [tenant('a')],
          queued: [queued('urgent', 'a', { priority: 3 })],
          running: [
            running('old-one', 'a', 'n1', [0], { priority: olderPriority, placedAt: T0 - 7_200_000 }),
            running('new-two', 'a', 'n1', [1, 2], { priority: 0, placedAt: T0 - 3_600_000 }),
          ],
        }),
        policy,
        T0,
      ).preempt;
    assert.deepEqual(victims(0), [
      { jobId: 'old-one', tenantId: 'a', reason: 'priority', forJobId: 'urgent' },
    ]);
    // Kueue-like keeps Kueue's choice, the most recently placed: the baseline is Kueue's.
    assert.deepEqual(
      victims(0, kueueLikePolicy).map((p) => p.jobId),
      ['new-two'],
    );
    // Not across priorities: the lower-priority job goes first, whatever it holds.
    assert.deepEqual(
      victims(1).map((p) => p.jobId),
      ['new-two'],
    );
  });

  it('estimates when a job its quota holds back starts: once its tenant’s jobs free the quota', () => {
    const d = (over = {}) =>
      schedule(
        snapshot({
          nodes: [node('n1', 4)],
          tenants: [tenant('a', { maxConcurrentDevices: 2, ...over })],
          // 50 steps of 10 s left, and 20.
          running: [running('r1', 'a', 'n1', [0]), running('r2', 'a', 'n1', [1], { stepsDone: 80 })],
          queued: [queued('q', 'a', { devices: 2, maxDevices: 2 })],
        }),
        defaultPolicy,
        T0,
      );
    const q = view(d(), 'q')!;
    assert.equal(q.waitReason, 'quota');
    assert.equal(q.estimatedStartAt, T0 + 500_000, 'both must end for two devices to come back');
    const spent = view(d({ deviceHoursPerMonth: 1, periodDeviceSeconds: 3600 }), 'q')!;
    assert.equal(spent.estimatedStartAt, null, 'device-hours spent: nothing running frees them');
  });

  it('preempts its own lower-priority jobs for a job its device quota holds back, only if that lets it run', () => {
    const quota = (max: number, jobs: ReturnType<typeof running>[], urgent = {}) =>
      schedule(
        snapshot({
          nodes: [node('n1', 4)],
          tenants: [tenant('a', { maxConcurrentDevices: max })],
          running: jobs,
          queued: [queued('urgent', 'a', { priority: 3, ...urgent })],
        }),
        kueueLikePolicy,
        T0,
      );
    const low = (id: string, devices: number[], over = {}) =>
      running(id, 'a', 'n1', devices, { priority: 0, ...over });
    // At its quota of 2 with a low-priority 2-device job: the urgent job takes the quota from it.
    const d = quota(2, [low('low', [0, 1])], { devices: 2, maxDevices: 2 });
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
      [['low', 'priority', 'urgent']],
    );
    assert.equal(view(d, 'urgent')!.waitReason, 'priority');
    // As few as the quota needs: the most recently placed of the lowest priority, not the normal one.
    const three = [
      low('low1', [0], { placedAt: T0 - 7_200_000 }),
      low('low2', [1]),
      running('normal', 'a', 'n1', [2], { priority: 1 }),
    ];
    assert.deepEqual(
      quota(3, three).preempt.map((p) => p.jobId),
      ['low2'],
    );
    // Nothing when only jobs of its priority or higher hold the quota, when what it could free would
    // not bring it under, or while a notice for it is out.
    const same = quota(1, [running('peer', 'a', 'n1', [0], { priority: 3 })]);
    assert.deepEqual(same.preempt, []);
    assert.equal(view(same, 'urgent')!.waitReason, 'quota');
    const short = quota(2, [low('low', [0]), running('peer', 'a', 'n1', [1], { priority: 3 })], {
      devices: 2,
      maxDevices: 2,
    });
    assert.deepEqual(short.preempt, [], 'one device freed, two needed: nobody restarts for nothing');
    const noticed = quota(1, [low('low', [0], { preemptRequestedAt: T0 - 1000 })]);
    assert.deepEqual(noticed.preempt, []);
  });

  it('reclaims from a borrowing tenant for one under its share, and never back and forth', () => {
    // b borrowed all 4 devices while a was away; a wants 2 back.
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: [0, 1, 2, 3].map((i) => running(`b${i}`, 'b', 'n1', [i], { placedAt: T0 - 3_600_000 + i })),
      queued: [queued('a0', 'a'), queued('a1', 'a'), queued('a2', 'a')],
    });
    const d = schedule(s, kueueLikePolicy, T0);
    assert.equal(d.preempt.length, 2, 'two devices reclaimed, not three: a would then borrow');
    assert.ok(d.preempt.every((p) => p.reason === 'reclaim' && p.tenantId === 'b'));
    // After the reclaim, 2 + 2: b's queued job may not take one back from a.
    const after = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: [
        running('a0', 'a', 'n1', [0]),
        running('a1', 'a', 'n1', [1]),
        running('b2', 'b', 'n1', [2]),
        running('b3', 'b', 'n1', [3]),
      ],
      queued: [queued('b0', 'b'), queued('b1', 'b')],
    });
    assert.deepEqual(schedule(after, kueueLikePolicy, T0).preempt, []);
  });

  it('gives a freed device to a tenant within its entitlement before one that would borrow, whatever their past usage', () => {
    // a (weight 1) and b (weight 3) both wait; b holds 3 of 4 devices, a none, and a has used far
    // more in the past. Ranked by share plus past usage, b's job went first onto the free device
    // and a's then reclaimed one of b's in the same round: a placement and a notice for one device.
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [
        tenant('a', { usage: { default: { deviceSeconds: 900, memoryByteSeconds: 0 } } }),
        tenant('b', { weight: 3, usage: { default: { deviceSeconds: 100, memoryByteSeconds: 0 } } }),
      ],
      running: [0, 1, 2].map((i) => running(`b${i}`, 'b', 'n1', [i])),
      queued: [queued('a5', 'a'), queued('b4', 'b')],
    });
    for (const policy of [kueueLikePolicy, { ...defaultPolicy, maxJobsPerDevice: 1 }]) {
      const d = schedule(s, policy, T0);
      assert.deepEqual(placedIds(d), ['a5']);
      assert.deepEqual(d.preempt, []);
      assert.equal(view(d, 'b4')!.waitReason, 'fair_share');
    }
  });

  it('lets a job past the aging bound preempt a job of a tenant with a larger share', () => {
    const s = snapshot({
      nodes: [node('n1', 2)],
      tenants: [tenant('a'), tenant('b')],
      running: [running('b0', 'b', 'n1', [0]), running('b1', 'b', 'n1', [1])],
      queued: [queued('old', 'a', { queuedAt: T0 - 2 * 3600_000 })],
    });
    // b is not borrowing (a wants nothing yet counts as demand 1 of 2: b's entitlement 0.5 < 1), so
    // reclaim applies; with both at entitlement only aging may still make room.
    const d = schedule(s, kueueLikePolicy, T0);
    assert.equal(d.preempt.length, 1);
    assert.ok(['reclaim', 'aging'].includes(d.preempt[0]!.reason));
    assert.equal(d.preempt[0]!.forJobId, 'old');
  });

  it('judges the share rules by the part of the pool the preemptor would hold where it lands', () => {
    // b holds a 4-device node with a full time-share group of three 4-device jobs (4 devices' worth,
    // 4/3 each); a wants one 4-device job, against an entitlement of half the pool. Counted whole,
    // the job would take a to all of the pool and nothing could be reclaimed for it; joining the
    // group in place of one of b's jobs it holds a third of each device: a at 1/3, b at 2/3.
    const group = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        running(`b${i}`, 'b', 'n1', [0, 1, 2, 3], { placedAt: T0 - 3_600_000 + i }),
      );
    const wide = queued('wide', 'a', { devices: 4, maxDevices: 4 });
    const base = { nodes: [node('n1', 4)], tenants: [tenant('a'), tenant('b')], queued: [wide] };
    const d = schedule(snapshot({ ...base, running: group(3) }), defaultPolicy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
      [['b2', 'reclaim', 'wide']],
      "b's most recently placed job, one victim",
    );
    // Checked where it lands: four 1-device jobs of b leave no group to join, so taking them would
    // leave a alone on the node, all of the pool against its half: nobody is preempted.
    const alone = [0, 1, 2, 3].map((i) => running(`b${i}`, 'b', 'n1', [i]));
    assert.deepEqual(schedule(snapshot({ ...base, running: alone }), defaultPolicy, T0).preempt, []);
  });

  it("judges a tenant's victims together, as Kueue removes them one after another", () => {
    // b's three 4-device jobs share n1's devices (4/3 of a device each), a wants 2 of them: only
    // all three leaving frees a device. Judged alone each passed the final-share rule (b keeps 2/3
    // of the pool against a's 1/2); together they leave b nothing, below a, and so entitled to
    // take them back.
    const group = [0, 1, 2].map((i) =>
      running(`b${i}`, 'b', 'n1', [0, 1, 2, 3], { placedAt: T0 - 3_600_000 + i }),
    );
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: group,
      queued: [queued('two', 'a', { devices: 2, maxDevices: 2 })],
    });
    assert.deepEqual(schedule(s, defaultPolicy, T0).preempt, []);
  });

  it('preempts only the victims the fit needs, not every job it took on the way', () => {
    // b holds the larger share: two of the three 2-device jobs filling devices 0-1, and p alone on
    // device 2; c the third and q on device 3. b's jobs go first, the most recently placed first:
    // p frees device 2, which is no use to a 2-device job, then g1 frees a place in the group.
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b'), tenant('c')],
      running: [
        running('g1', 'b', 'n1', [0, 1], { placedAt: T0 - 3_000_000 }),
        running('g2', 'b', 'n1', [0, 1], { placedAt: T0 - 3_500_000 }),
        running('g3', 'c', 'n1', [0, 1], { placedAt: T0 - 3_500_000 }),
        running('p', 'b', 'n1', [2], { placedAt: T0 - 2_000_000 }),
        running('q', 'c', 'n1', [3], { placedAt: T0 - 2_000_000 }),
      ],
      queued: [queued('two', 'a', { devices: 2, maxDevices: 2 })],
    });
    const d = schedule(s, defaultPolicy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
      [['g1', 'reclaim', 'two']],
    );
  });

  it('lets a wide aged job of a starved tenant preempt while its tenant holds less than the victims', () => {
    // a (nothing held) wants all 4 devices of n1; b and c hold two each, everyone entitled to a
    // third. With the job counted, a would hold more than either victim's tenant keeps: the
    // final-share rule never lets it in. Past the aging bound it may preempt, since a holds less
    // before admission than b or c after losing one job.
    const s = (waited: number) =>
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a'), tenant('b'), tenant('c')],
        running: [
          running('b0', 'b', 'n1', [0]),
          running('b1', 'b', 'n1', [1]),
          running('c0', 'c', 'n1', [2]),
          running('c1', 'c', 'n1', [3]),
        ],
        queued: [queued('wide', 'a', { devices: 4, maxDevices: 4, queuedAt: T0 - waited })],
      });
    assert.deepEqual(schedule(s(30 * 60_000), kueueLikePolicy, T0).preempt, [], 'not aged yet');
    const d = schedule(s(2 * 3_600_000), kueueLikePolicy, T0);
    assert.deepEqual(d.preempt.map((p) => [p.jobId, p.reason]).sort(), [
      ['b0', 'aging'],
      ['b1', 'aging'],
      ['c0', 'aging'],
      ['c1', 'aging'],
    ]);
    // Neither way back: b's aged job may not take a device from a, which then holds the pool and
    // loses it all with one job, while b holds nothing before admission either.
    const after = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: [running('wide', 'a', 'n1', [0, 1, 2, 3])],
      queued: [queued('b0', 'b', { queuedAt: T0 - 2 * 3_600_000 })],
    });
    assert.deepEqual(schedule(after, kueueLikePolicy, T0).preempt, []);
  });

  it("counts what a preemptor will hold as its tenant's for the rest of the round", () => {
    // b holds 7 of 8 devices, c one; a wants three 2-device jobs and is entitled to 3.5 devices.
    // The first reclaims two of b's; counted with those, a would borrow after a second, which must
    // then wait (without it a reclaimed four devices in one round and held more than entitled).
    const s = snapshot({
      nodes: [node('n1', 8)],
      tenants: [tenant('a'), tenant('b'), tenant('c')],
      running: [0, 1, 2, 3, 4, 5, 6, 7].map((i) =>
        running(`r${i}`, i < 7 ? 'b' : 'c', 'n1', [i], { placedAt: T0 - 3_600_000 + i }),
      ),
      queued: [1, 2, 3].map((k) => queued(`a${k}`, 'a', { devices: 2, maxDevices: 2 })),
    });
    const d = schedule(s, kueueLikePolicy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
      [
        ['r6', 'reclaim', 'a1'],
        ['r5', 'reclaim', 'a1'],
      ],
    );
  });

  it('does not preempt again while earlier victims are still leaving', () => {
    const s = snapshot({
      nodes: [node('n1', 1)],
      tenants: [tenant('a')],
      running: [running('low', 'a', 'n1', [0], { priority: 0, preemptRequestedAt: T0 - 5000 })],
      queued: [queued('urgent', 'a', { priority: 3 })],
    });
    assert.deepEqual(schedule(s, kueueLikePolicy, T0).preempt, []);
  });

  it('takes the devices back once the grace period has run out', () => {
    const s = snapshot({
      nodes: [node('n1', 1)],
      tenants: [tenant('a')],
      running: [running('low', 'a', 'n1', [0], { priority: 0, preemptRequestedAt: T0 - 31_000 })],
      queued: [queued('urgent', 'a', { priority: 3 })],
    });
    const d = schedule(s, kueueLikePolicy, T0);
    assert.deepEqual(d.takeBack, [{ jobId: 'low', tenantId: 'a' }]);
    assert.deepEqual(placedIds(d), ['urgent']);
  });

  it('reports shares against entitlements', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4)],
        tenants: [tenant('a'), tenant('b', { weight: 3 })],
        running: [running('a0', 'a', 'n1', [0])],
        queued: [queued('b0', 'b', { devices: 4, maxDevices: 4 })],
      }),
      kueueLikePolicy,
      T0,
    );
    const a = d.shares.find((s) => s.tenantId === 'a')!;
    const b = d.shares.find((s) => s.tenantId === 'b')!;
    assert.equal(a.share, 0.25);
    assert.equal(a.entitlement, 0.25);
    assert.equal(b.entitlement, 0.75);
    assert.equal(b.demand, 4);
  });

  it('searches the whole pool for the fewest victims up to 64 nodes past the first fit', () => {
    // Every node but the last holds two low-priority 1-device jobs (two victims for a 2-device job);
    // the last holds one 2-device job (one victim).
    const pool = (nodes: number) =>
      snapshot({
        nodes: Array.from({ length: nodes }, (_, i) => node(`n${String(i).padStart(3, '0')}`, 2)),
        tenants: [tenant('a')],
        running: Array.from({ length: nodes }, (_, i) => {
          const n = `n${String(i).padStart(3, '0')}`;
          return i === nodes - 1
            ? [running(`${n}-w`, 'a', n, [0, 1], { priority: 0 })]
            : [
                running(`${n}-0`, 'a', n, [0], { priority: 0 }),
                running(`${n}-1`, 'a', n, [1], { priority: 0 }),
              ];
        }).flat(),
        queued: [queued('high', 'a', { priority: 3, devices: 2, maxDevices: 2 })],
      });
    const small = schedule(pool(60), kueueLikePolicy, T0);
    assert.deepEqual(
      small.preempt.map((p) => p.jobId),
      ['n059-w'],
    );
    // On a bigger pool the search takes the best of the first fit and the 64 nodes after it: one
    // victim more, for a round that does not look at every node of a full pool (bench:scheduler).
    const large = schedule(pool(100), kueueLikePolicy, T0);
    assert.equal(large.preempt.length, 2);
    assert.ok(large.preempt.every((p) => p.reason === 'priority' && p.jobId.startsWith('n000-')));
  });
});

describe('schedule(): compaction', () => {
  it('clears a node for a tenant under its entitlement by reclaiming from borrowers and moving the jobs it may not preempt', () => {
    // 3 nodes × 2 devices. a (weight 2) holds 1 device against 0.44 of the pool and wants a 2-device
    // job that would take it over its entitlement, so plain reclaim may not serve it; c borrows (3
    // devices against 0.22); b holds its entitlement (2 devices), one on every node but a's.
    const snap = (waitedMs: number) =>
      snapshot({
        nodes: [node('n1', 2), node('n2', 2), node('n3', 2)],
        tenants: [tenant('a', { weight: 2 }), tenant('b', { weight: 2 }), tenant('c')],
        running: [
          running('c1', 'c', 'n1', [0]),
          running('b1', 'b', 'n1', [1]),
          running('c2', 'c', 'n2', [0]),
          running('b2', 'b', 'n2', [1]),
          running('c3', 'c', 'n3', [0]),
          running('a1', 'a', 'n3', [1]),
        ],
        queued: [queued('wide', 'a', { devices: 2, maxDevices: 2, queuedAt: T0 - waitedMs })],
      });
    const policy = { ...defaultPolicy, timeSharing: false };
    const d = schedule(snap(20 * 60_000), policy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId, p.moveTo ?? null]),
      [
        ['c1', 'reclaim', 'wide', null],
        ['c2', 'reclaim', 'wide', null],
        ['b1', 'compact', 'wide', { nodeId: 'n2', devices: [0] }],
      ],
    );
    assert.equal(view(d, 'wide')!.waitReason, 'capacity');
    // Not before it has waited the set time, and not with the rule off: nothing may be preempted.
    assert.deepEqual(schedule(snap(5 * 60_000), policy, T0).preempt, []);
    assert.deepEqual(
      schedule(snap(20 * 60_000), { ...policy, reclaimCompactionAfterSeconds: null }, T0).preempt,
      [],
    );
  });

  // Two 4-device nodes, each with two 1-device jobs on devices 0 and 1: four devices are free, but
  // no node has the four a wide job wants.
  const spread = () => [
    running('a0', 'a', 'n1', [0]),
    running('a1', 'a', 'n1', [1]),
    running('b0', 'b', 'n2', [0]),
    running('b1', 'b', 'n2', [1]),
  ];
  const wide = (over = {}) => queued('wide', 'c', { devices: 4, maxDevices: 4, ...over });
  const base = {
    nodes: [node('n1', 4), node('n2', 4)],
    tenants: [tenant('a'), tenant('b'), tenant('c')],
  };
  const compacting = { ...kueueLikePolicy, compaction: true };

  it('moves the jobs of one node to free devices on another, whatever their tenants', () => {
    const d = schedule(snapshot({ ...base, running: spread(), queued: [wide()] }), compacting, T0);
    assert.deepEqual(d.place, []);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId, p.moveTo?.nodeId]),
      [
        ['a0', 'compact', 'wide', 'n2'],
        ['a1', 'compact', 'wide', 'n2'],
      ],
    );
    assert.deepEqual(d.preempt.flatMap((p) => p.moveTo!.devices).sort(), [2, 3]);
    assert.equal(view(d, 'wide')!.waitReason, 'capacity');
    // Off (the Kueue-like baseline), nothing moves.
    assert.deepEqual(
      schedule(snapshot({ ...base, running: spread(), queued: [wide()] }), kueueLikePolicy, T0).preempt,
      [],
    );
  });

  it('moves only what the job needs, and never a job of higher priority', () => {
    // n1: a high-priority job on device 0, a normal one on 1; n2 the same with b. A 3-device job
    // needs one device more on either node: the normal job moves, the high-priority one stays.
    const jobs = [
      running('a-high', 'a', 'n1', [0], { priority: 3 }),
      running('a1', 'a', 'n1', [1]),
      running('b-high', 'b', 'n2', [0], { priority: 3 }),
      running('b1', 'b', 'n2', [1]),
    ];
    const three = queued('three', 'c', { devices: 3, maxDevices: 3 });
    const d = schedule(snapshot({ ...base, running: jobs, queued: [three] }), compacting, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.moveTo?.nodeId]),
      [['a1', 'compact', 'n2']],
    );
  });

  it('with compactIntoGroups, moves jobs into time-share groups when too few devices are free', () => {
    // n1: two 1-device jobs, two devices free; n2: four 1-device jobs alone. Two devices are free in
    // all, the wide job wants four: only sharing n2's devices makes room on n1.
    const jobs = [
      running('a0', 'a', 'n1', [0]),
      running('a1', 'a', 'n1', [1]),
      ...[0, 1, 2, 3].map((i) => running(`b${i}`, 'b', 'n2', [i])),
    ];
    const s = () => snapshot({ ...base, running: jobs, queued: [wide()] });
    const d = schedule(s(), { ...defaultPolicy, compactIntoGroups: true }, T0);
    const moves = d.preempt.filter((p) => p.reason === 'compact');
    assert.deepEqual(
      moves.map((p) => [p.jobId, p.forJobId, p.moveTo?.nodeId]),
      [
        ['a0', 'wide', 'n2'],
        ['a1', 'wide', 'n2'],
      ],
    );
    // Each joins a different job's device (two jobs per device at most).
    const to = moves.flatMap((p) => p.moveTo!.devices);
    assert.equal(new Set(to).size, 2);
    // Off, compaction needs the room free somewhere: nothing moves.
    const off = schedule(s(), { ...defaultPolicy, compactIntoGroups: false }, T0);
    assert.ok(!off.preempt.some((p) => p.reason === 'compact'));
  });

  it('moves nothing when a job to move would have nowhere to go', () => {
    const full = [...spread(), running('b2', 'b', 'n2', [2]), running('b3', 'b', 'n2', [3])];
    const d = schedule(snapshot({ ...base, running: full, queued: [wide()] }), compacting, T0);
    assert.ok(!d.preempt.some((p) => p.reason === 'compact'));
  });

  it('keeps the devices a moved job goes to while it checkpoints, and gives them to it first', () => {
    const noticed = spread().map((r) =>
      r.nodeId === 'n1'
        ? {
            ...r,
            preemptRequestedAt: T0 - 5_000,
            preemptReason: 'compact' as const,
            preemptFor: 'wide',
            returnTo: { nodeId: 'n2', devices: [r.devices[0]! + 2] },
          }
        : r,
    );
    // While a0 and a1 checkpoint, a new 1-device job takes neither n2's devices 2 and 3 nor n1's.
    const during = schedule(
      snapshot({ ...base, running: noticed, queued: [wide(), queued('late', 'b', { queuedAt: T0 - 1000 })] }),
      compacting,
      T0,
    );
    assert.deepEqual(during.place, []);
    assert.deepEqual(during.preempt, []);
    // Checkpointed and back in the queue: each goes to the devices kept for it, and the wide job to
    // n1 ahead of a job of a tenant holding nothing (which the fair-share order would put first).
    const back = schedule(
      snapshot({
        ...base,
        tenants: [...base.tenants, tenant('d')],
        running: spread().filter((r) => r.nodeId === 'n2'),
        queued: [
          wide(),
          queued('late', 'd', { queuedAt: T0 - 120_000 }),
          ...[0, 1].map((i) =>
            queued(`a${i}`, 'a', {
              requeueReason: 'preempted',
              returnTo: { nodeId: 'n2', devices: [i + 2] },
              returnFor: 'wide',
            }),
          ),
        ],
      }),
      compacting,
      T0,
    );
    assert.deepEqual(back.place.map((p) => [p.jobId, p.nodeId, p.devices]).sort(), [
      ['a0', 'n2', [2]],
      ['a1', 'n2', [3]],
      ['wide', 'n1', [0, 1, 2, 3]],
    ]);
    assert.equal(view(back, 'late')!.waitReason, 'capacity');
  });
});
