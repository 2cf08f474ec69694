/**
 * `maxDevices` growth never delays anyone: a job that grew into idle devices gives them back (a
 * `shrink` notice, checkpoint, restart at its minimum) when a job waits that fits in what it grew
 * into. Before, a job grown from 1 to 4 devices kept every narrower job of the pool waiting until
 * it ended: a 1-device job cannot join a 4-device group, and the share rule would not reclaim a
 * job whose whole footprint leaving drops its tenant below the preemptor.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import { T0, node, queued, running, snapshot, tenant } from './builders.js';

/** One 4-device node held by `grown` (placed an hour ago), and the jobs waiting for it. */
const pool = (minDevices: number, waiting: ReturnType<typeof queued>[]) =>
  snapshot({
    nodes: [node('n1', 4)],
    tenants: [tenant('a'), tenant('b')],
    running: [running('grown', 'a', 'n1', [0, 1, 2, 3], { minDevices })],
    queued: waiting,
  });

describe('schedule(): jobs grown into idle devices', () => {
  it('gives them back to a job of its own tenant and priority, which then goes first to them', () => {
    const d = schedule(pool(1, [queued('q', 'a')]), defaultPolicy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
      [['grown', 'shrink', 'q']],
    );
    assert.equal(d.queue.find((v) => v.jobId === 'q')?.waitReason, 'capacity');
  });

  it("gives them back to another tenant's job that the share rule alone would not place", () => {
    const d = schedule(pool(1, [queued('q', 'b')]), defaultPolicy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason]),
      [['grown', 'shrink']],
    );
  });

  it('says `shrink` to a job of a borrowing tenant giving back what it grew into, not `reclaim`', () => {
    // a's two jobs asked 1 device each and grew to a node each; b wants one device. a borrows, and
    // one grown job leaving keeps a above b: the share rule allows a reclaim as well.
    const s = snapshot({
      nodes: [node('n1', 2), node('n2', 2)],
      tenants: [tenant('a'), tenant('b')],
      running: [
        running('grown1', 'a', 'n1', [0, 1], { minDevices: 1 }),
        running('grown2', 'a', 'n2', [0, 1], { minDevices: 1 }),
      ],
      queued: [queued('q', 'b')],
    });
    const d = schedule(s, { ...defaultPolicy, maxJobsPerDevice: 1 }, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.tenantId, p.reason, p.forJobId]),
      [['a', 'shrink', 'q']],
    );
  });

  it('keeps them from a job wider than what it grew into', () => {
    const d = schedule(pool(3, [queued('q', 'a', { devices: 2, maxDevices: 2 })]), defaultPolicy, T0);
    assert.deepEqual(d.preempt, []);
  });

  it('keeps a job at its minimum, and one grown within its minimum run time', () => {
    assert.deepEqual(schedule(pool(4, [queued('q', 'a')]), defaultPolicy, T0).preempt, []);
    const fresh = pool(1, [queued('q', 'a')]);
    fresh.running[0]!.placedAt = T0 - 1000;
    assert.deepEqual(schedule(fresh, defaultPolicy, T0).preempt, []);
  });

  it('gives them back to a job of its tenant that its device quota holds back, and only enough of them', () => {
    // a's quota is its 4 devices, all held by `grown` (1 asked, 3 grown into).
    const held = (minDevices: number, waiting: ReturnType<typeof queued>[]) =>
      snapshot({
        nodes: [node('n1', 8)],
        tenants: [tenant('a', { maxConcurrentDevices: 4 }), tenant('b', { maxConcurrentDevices: 4 })],
        running: [running('grown', 'a', 'n1', [0, 1, 2, 3], { minDevices })],
        queued: waiting,
      });
    const d = schedule(held(1, [queued('q1', 'a'), queued('q2', 'a')]), defaultPolicy, T0);
    assert.deepEqual(
      d.preempt.map((p) => [p.jobId, p.reason, p.forJobId]),
      [['grown', 'shrink', 'q1']],
      'one notice: what it grew into lets both start beside it at its minimum',
    );
    assert.deepEqual(
      d.queue.map((v) => [v.jobId, v.waitReason]),
      [
        ['q1', 'quota'],
        ['q2', 'quota'],
      ],
    );
    // Not when it did not grow, nor for another tenant's quota.
    assert.deepEqual(schedule(held(4, [queued('q1', 'a')]), defaultPolicy, T0).preempt, []);
    const other = held(1, [queued('b1', 'b')]);
    other.tenants[1]!.activeDevices = 4;
    assert.deepEqual(schedule(other, defaultPolicy, T0).preempt, []);
  });
});
