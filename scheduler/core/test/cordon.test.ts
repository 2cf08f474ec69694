// Nodes an admin cordoned (POST /v1/nodes/{id}/cordon): nothing new goes onto their devices (placed,
// joined, claimed, moved to), the jobs already there keep running and count toward their tenants'
// shares, a job only a cordoned node could hold waits for `capacity` without an estimate, and a
// node cordoned with eviction has every job on it given a `drain` notice, minimum run time or not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import type { Decisions } from '../types.js';
import { T0, node, queued, running, snapshot, tenant } from './builders.js';

/** Whether any decision puts work on the node: a placement, or a move's destination. */
const onto = (d: Decisions, nodeId: string) =>
  d.place.some((p) => p.nodeId === nodeId) || d.preempt.some((p) => p.moveTo?.nodeId === nodeId);

describe('schedule(): cordoned nodes', () => {
  it('places nothing on a cordoned node: a free device there is passed over for a shared one elsewhere', () => {
    const s = (cordoned: boolean) =>
      snapshot({
        nodes: [node('n1', 2, { cordoned }), node('n2', 1)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('r1', 'a', 'n1', [0]), running('r2', 'a', 'n2', [0])],
        queued: [queued('q', 'b')],
      });
    // Not cordoned, the free device wins (best fit before time-sharing).
    assert.deepEqual(
      schedule(s(false), defaultPolicy, T0).place.map((p) => [p.nodeId, p.devices]),
      [['n1', [1]]],
    );
    const d = schedule(s(true), defaultPolicy, T0);
    assert.deepEqual(
      d.place.map((p) => [p.jobId, p.nodeId, p.sharedWith]),
      [['q', 'n2', 1]],
    );
    assert.deepEqual(d.preempt, [], 'the jobs on the cordoned node keep running');
  });

  it('neither joins a time-share group on a cordoned node nor moves a job there to make room', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2, { cordoned: true }), node('n2', 2)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('r1', 'a', 'n1', [0]), running('r2', 'a', 'n2', [0])],
        // Wants both devices of a node: n2 has one free, n1 one free beside a job it could join.
        queued: [queued('wide', 'b', { devices: 2, maxDevices: 2 })],
      }),
      defaultPolicy,
      T0,
    );
    assert.equal(onto(d, 'n1'), false, JSON.stringify(d.preempt));
    // Not cordoned, compaction moved r1 off n1 to clear it for the wide job.
    assert.ok(
      d.preempt.every((p) => p.jobId !== 'r1'),
      'nobody on the cordoned node is moved to make room there',
    );
  });

  it("counts the jobs on a cordoned node in their tenant's share and the pool's size", () => {
    // Tenant a runs on the cordoned node and queued first; b holds nothing: b goes first, to the
    // one device it may have, and a waits.
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2, { cordoned: true }), node('n2', 1)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('r1', 'a', 'n1', [0])],
        queued: [queued('qa', 'a', { queuedAt: T0 - 120_000 }), queued('qb', 'b', { queuedAt: T0 - 60_000 })],
      }),
      { ...defaultPolicy, maxJobsPerDevice: 1 },
      T0,
    );
    assert.deepEqual(
      d.place.map((p) => [p.jobId, p.nodeId]),
      [['qb', 'n2']],
    );
    const a = d.shares.find((x) => x.tenantId === 'a')!;
    assert.equal(a.devices, 1);
    assert.equal(a.share, 0.5, 'one of the two devices a job holds or may be placed on');
  });

  it("does not count a cordoned node's free devices in the pool: a tenant holding all the rest borrows", () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 4, { cordoned: true }), node('n2', 4)],
        tenants: [tenant('a'), tenant('b')],
        running: [0, 1, 2, 3].map((i) => running(`r${i}`, 'a', 'n2', [i])),
        queued: [queued('qb', 'b')],
      }),
      { ...defaultPolicy, maxJobsPerDevice: 1 },
      T0,
    );
    // Counted whole, the pool had 8 devices, a held its half and b could take nothing back.
    assert.deepEqual(
      d.preempt.map((p) => [p.reason, p.forJobId]),
      [['reclaim', 'qb']],
    );
    assert.equal(onto(d, 'n1'), false);
  });

  it('a job only a cordoned node holds waits for capacity, without an estimate; one no node holds is unschedulable', () => {
    const d = schedule(
      snapshot({
        nodes: [node('big', 4, { cordoned: true }), node('small', 1)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('r1', 'a', 'big', [0]), running('r2', 'b', 'small', [0])],
        queued: [
          // a would be told `fair_share` (it holds its half of what is counted) were the cordoned
          // node's devices free for it.
          queued('wide', 'a', { devices: 2, maxDevices: 2 }),
          queued('wider', 'b', { devices: 8, maxDevices: 8 }),
        ],
      }),
      { ...defaultPolicy, maxJobsPerDevice: 1 },
      T0,
    );
    assert.deepEqual(d.place, []);
    assert.deepEqual(
      d.queue.map((q) => [q.jobId, q.waitReason, q.estimatedStartAt]),
      [
        ['wide', 'capacity', null],
        ['wider', 'unschedulable', null],
      ],
    );
    assert.equal(onto(d, 'big'), false);
  });

  it('a pool whose only node is cordoned: its jobs wait for capacity', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2, { cordoned: true })],
        tenants: [tenant('a')],
        running: [],
        queued: [queued('q', 'a')],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(d.place, []);
    assert.deepEqual(
      d.queue.map((q) => [q.waitReason, q.estimatedStartAt]),
      [['capacity', null]],
    );
  });
});

describe('schedule(): cordoned with eviction (drain)', () => {
  const drained = (over: { preemptRequestedAt?: number } = {}) =>
    snapshot({
      nodes: [node('n1', 2, { cordoned: true, evict: true }), node('n2', 1)],
      tenants: [tenant('a'), tenant('b'), tenant('c')],
      running: [
        // Started a second ago: no other reason may give it a notice yet.
        running('r1', 'a', 'n1', [0], { placedAt: T0 - 1_000, runningSince: T0 - 1_000 }),
        running('r2', 'b', 'n1', [1]),
        running('r3', 'a', 'n2', [0]),
      ].map((r) =>
        r.nodeId === 'n1' && over.preemptRequestedAt !== undefined
          ? {
              ...r,
              preemptRequestedAt: over.preemptRequestedAt,
              preemptReason: 'drain' as const,
              preemptFor: r.id,
            }
          : r,
      ),
      queued: [queued('q', 'c')],
    });
  const policy = { ...defaultPolicy, maxJobsPerDevice: 1 };

  it('gives every job on the node a drain notice, minimum run time or not, and nobody claims its devices', () => {
    const d = schedule(drained(), policy, T0);
    assert.deepEqual(
      d.preempt.filter((p) => p.reason === 'drain'),
      [
        { jobId: 'r1', tenantId: 'a', reason: 'drain', forJobId: 'r1' },
        { jobId: 'r2', tenantId: 'b', reason: 'drain', forJobId: 'r2' },
      ],
    );
    assert.equal(onto(d, 'n1'), false);
    assert.deepEqual(d.takeBack, []);
  });

  it('with preemption off too: it is an admin’s order, not a policy', () => {
    const d = schedule(drained(), { ...policy, preemption: false }, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason]),
      [
        ['r1', 'drain'],
        ['r2', 'drain'],
      ],
    );
    assert.deepEqual(d.place, []);
  });

  it('does not notice a job twice, and takes its devices back once the grace runs out', () => {
    const within = schedule(drained({ preemptRequestedAt: T0 - 1_000 }), policy, T0);
    assert.deepEqual(
      within.preempt.filter((p) => p.reason === 'drain'),
      [],
    );
    assert.deepEqual(within.takeBack, []);
    const late = schedule(
      drained({ preemptRequestedAt: T0 - policy.preemptGraceSeconds * 1000 - 1 }),
      policy,
      T0,
    );
    assert.deepEqual(
      late.takeBack.map((t) => t.jobId),
      ['r1', 'r2'],
    );
    assert.equal(onto(late, 'n1'), false, 'the devices taken back are not given to anyone');
  });

  it('a cordon without eviction gives no notice', () => {
    const s = drained();
    const d = schedule({ ...s, nodes: s.nodes.map((n) => ({ ...n, evict: false })) }, policy, T0);
    assert.deepEqual(
      d.preempt.filter((p) => p.jobId === 'r1' || p.jobId === 'r2'),
      [],
    );
  });
});
