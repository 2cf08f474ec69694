// The capacity signal after a round: poolDemand(snapshot, schedule(snapshot)) per pool.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { poolDemand, type PoolDemand } from '../demand.js';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import type { Snapshot } from '../types.js';
import { T0, node, queued, running, snapshot, tenant } from './builders.js';

const demandOf = (s: Snapshot, pool: string, now = T0): PoolDemand | undefined => {
  const d = schedule(s, defaultPolicy, now);
  return poolDemand(s, d).find((p) => p.pool === pool);
};

describe('poolDemand()', () => {
  it('a pool with no nodes wants the devices of its queued jobs, which wait for capacity', () => {
    const s = snapshot({
      nodes: [node('n1', 2)],
      tenants: [tenant('a'), tenant('b')],
      running: [],
      queued: [
        queued('q1', 'a', { pool: 'empty', devices: 2, maxDevices: 2 }),
        queued('q2', 'b', { pool: 'empty' }),
      ],
    });
    const d = schedule(s, defaultPolicy, T0);
    assert.deepEqual(
      d.queue.map((q) => q.waitReason),
      ['capacity', 'capacity'],
    );
    assert.deepEqual(poolDemand(s, d), [
      {
        pool: 'default',
        devices: 2,
        idleDevices: 2,
        busyDevices: 0,
        queuedDevices: 0,
        queuedJobs: 0,
        runningJobs: 0,
        wantedDevices: 0,
      },
      {
        pool: 'empty',
        devices: 0,
        idleDevices: 0,
        busyDevices: 0,
        queuedDevices: 3,
        queuedJobs: 2,
        runningJobs: 0,
        wantedDevices: 3,
      },
    ]);
  });

  it('counts what this round placed as busy, and a time-shared device once', () => {
    const s = snapshot({
      nodes: [node('n1', 4)],
      tenants: [tenant('a'), tenant('b')],
      running: [running('r1', 'a', 'n1', [0])],
      queued: [queued('q1', 'b', { devices: 2, maxDevices: 2 })],
    });
    const p = demandOf(s, 'default')!;
    assert.equal(p.runningJobs, 2);
    assert.equal(p.busyDevices, 3);
    assert.equal(p.idleDevices, 1);
    assert.equal(p.queuedDevices, 0);
    assert.equal(p.wantedDevices, 3);

    const shared = snapshot({
      nodes: [node('n1', 1)],
      tenants: [tenant('a'), tenant('b')],
      running: [running('r1', 'a', 'n1', [0]), running('r2', 'b', 'n1', [0])],
      queued: [],
    });
    const q = demandOf(shared, 'default')!;
    assert.equal(q.busyDevices, 1, 'two jobs on one device hold one device');
    assert.equal(q.wantedDevices, 1);
    assert.equal(q.idleDevices, 0);
  });

  it('jobs held back by their quota want nothing; devices on a draining node stay wanted', () => {
    const s = snapshot({
      // n2 is draining: not among the ready nodes, but r1 still holds its devices there.
      nodes: [node('n1', 1)],
      tenants: [tenant('a', { maxConcurrentDevices: 2 })],
      running: [running('r1', 'a', 'n2', [0, 1])],
      queued: [queued('q1', 'a')],
    });
    const d = schedule(s, defaultPolicy, T0);
    assert.equal(d.queue[0]!.waitReason, 'quota');
    const p = poolDemand(s, d)[0]!;
    assert.equal(p.queuedJobs, 1);
    assert.equal(p.queuedDevices, 0);
    assert.equal(p.busyDevices, 2);
    assert.equal(p.idleDevices, 1);
    assert.equal(p.wantedDevices, 2);
  });

  it('a job whose preemption grace ran out is wanted as queued, not as busy', () => {
    const s = snapshot({
      nodes: [],
      tenants: [tenant('a')],
      running: [running('r1', 'a', 'gone', [0], { preemptRequestedAt: T0 - 3_600_000 })],
      queued: [],
    });
    const p = demandOf(s, 'default')!;
    assert.equal(p.busyDevices, 0);
    assert.equal(p.queuedJobs, 1);
    assert.equal(p.queuedDevices, 1);
    assert.equal(p.wantedDevices, 1);
  });

  it('a paused job taken back wants nothing: it waits for its tenant, not for devices', () => {
    const s = snapshot({
      nodes: [],
      tenants: [tenant('a')],
      running: [
        running('r1', 'a', 'gone', [0], {
          paused: true,
          preemptRequestedAt: T0 - 3_600_000,
          preemptReason: 'pause',
        }),
      ],
      queued: [],
    });
    // A pool with no nodes and nothing wanted has no entry at all.
    const p = demandOf(s, 'default');
    assert.equal(p?.queuedJobs ?? 0, 0);
    assert.equal(p?.wantedDevices ?? 0, 0);
  });

  it('an idle pool with nothing to run wants zero devices', () => {
    const s = snapshot({ nodes: [node('n1', 8)], tenants: [tenant('a')], running: [], queued: [] });
    assert.deepEqual(demandOf(s, 'default'), {
      pool: 'default',
      devices: 8,
      idleDevices: 8,
      busyDevices: 0,
      queuedDevices: 0,
      queuedJobs: 0,
      runningJobs: 0,
      wantedDevices: 0,
    });
  });
});
