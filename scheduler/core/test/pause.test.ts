// A job its tenant paused: the round gives a running one a `pause` notice whatever its minimum run
// time, never twice, and takes its devices back when the grace runs out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicy } from '../policy.js';
import { schedule } from '../schedule.js';
import { T0, node, queued, running, snapshot, tenant } from './builders.js';

describe('schedule(): paused jobs', () => {
  it('gives a paused running job a pause notice inside its minimum run time, and only that job', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 2)],
        tenants: [tenant('a')],
        running: [
          // Placed a second ago: no other reason may preempt it yet.
          running('p', 'a', 'n1', [0], { paused: true, placedAt: T0 - 1_000, runningSince: T0 - 1_000 }),
          running('r', 'a', 'n1', [1], { placedAt: T0 - 1_000, runningSince: T0 - 1_000 }),
        ],
        queued: [],
      }),
      defaultPolicy,
      T0,
    );
    assert.deepEqual(d.preempt, [{ jobId: 'p', tenantId: 'a', reason: 'pause', forJobId: 'p' }]);
    assert.deepEqual(d.takeBack, []);
  });

  it('does not notice a paused job twice, and takes its devices back once the grace runs out', () => {
    const noticed = (at: number) =>
      running('p', 'a', 'n1', [0], { paused: true, preemptRequestedAt: at, preemptReason: 'pause' });
    const s = (at: number) =>
      snapshot({ nodes: [node('n1', 1)], tenants: [tenant('a')], running: [noticed(at)], queued: [] });
    const within = schedule(s(T0 - 1_000), defaultPolicy, T0);
    assert.deepEqual(within.preempt, []);
    assert.deepEqual(within.takeBack, []);
    const late = schedule(s(T0 - defaultPolicy.preemptGraceSeconds * 1000 - 1), defaultPolicy, T0);
    assert.deepEqual(late.preempt, []);
    assert.deepEqual(
      late.takeBack.map((t) => t.jobId),
      ['p'],
    );
  });

  it('with no grace at all, neither takes a fresh pause notice back nor places anyone on its devices', () => {
    const d = schedule(
      snapshot({
        nodes: [node('n1', 1)],
        tenants: [tenant('a'), tenant('b')],
        running: [running('p', 'a', 'n1', [0], { paused: true })],
        queued: [queued('q', 'b')],
      }),
      { ...defaultPolicy, preemptGraceSeconds: 0, maxJobsPerDevice: 1 },
      T0,
    );
    assert.deepEqual(
      d.preempt.map((p) => p.reason),
      ['pause'],
    );
    assert.deepEqual(d.takeBack, []);
    assert.deepEqual(d.place, [], 'the device is still held until the notice is taken back');
  });
});
