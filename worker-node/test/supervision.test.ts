/**
 * The daemon's heartbeat lease (supervision.ts) on a clock of the test's: it counts from when an
 * accepted heartbeat was sent, since the API records it before answering; counted from the answer,
 * a slow answer let the job process outlive the node timeout (a chaos soak). An older heartbeat
 * answered late moves nothing back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeartbeatLease, supervisionMs } from '../supervision.js';

test('the lease counts from the send of the last accepted heartbeat, not from its answer', () => {
  let now = 0;
  const lease = new HeartbeatLease(1000, () => now);
  now = 100; // sent
  now = 600; // answered half a second later
  lease.accepted(100);
  now = 1099;
  assert.equal(lease.fresh, true);
  now = 1100;
  assert.equal(lease.fresh, false, 'stale 1000 ms after the send, not after the answer (1600)');
});

test('an older heartbeat answered after a newer one does not move the lease back', () => {
  let now = 0;
  const lease = new HeartbeatLease(1000, () => now);
  now = 900;
  lease.accepted(800);
  lease.accepted(300); // sent earlier, answered last
  now = 1799;
  assert.equal(lease.fresh, true);
});

test('the job process is gone a heartbeat period before the node timeout, less one check', () => {
  // Two supervision windows end a heartbeat period before the node timeout; the watch looks at
  // least every 50 ms, less than the shortest heartbeat period the worker accepts (100 ms).
  for (const [timeout, heartbeat] of [
    [4000, 500],
    [15_000, 5000],
    [500, 100],
    [500, 166],
  ] as const) {
    const s = supervisionMs(timeout, heartbeat);
    assert.ok(2 * s + 50 < timeout, `${timeout}/${heartbeat}: 2 × ${s} + 50 < ${timeout}`);
  }
});
