/**
 * The daemon's heartbeat lease (supervision.ts) on a clock of the test's: a job process may run to
 * 2 × `supervisionMs` after the send of the last accepted heartbeat, since the API records it before
 * answering; counted from the answer, a slow answer let the job process outlive the node timeout (a
 * chaos soak). An older heartbeat answered late moves nothing back. And a heartbeat answered late
 * renews the deadline rather than missing it: the lease was one heartbeat period long at the
 * defaults, so one answer ~4 s late stopped every job on the node (a QA pass).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeartbeatLease, heartbeatRetryDelays, supervisionMs, watchDaemon } from '../supervision.js';

test('a job may run to twice the supervision time after the send of the last accepted heartbeat', () => {
  let now = 0;
  const lease = new HeartbeatLease(1000, () => now);
  now = 100; // sent
  now = 600; // answered half a second later
  lease.accepted(100);
  now = 1100;
  assert.equal(lease.runForMs(), 1000, 'to 2100: counted from the send (100), not the answer (600)');
  now = 2100;
  assert.equal(lease.runForMs(), 0);
});

test('an older heartbeat answered after a newer one does not move the lease back', () => {
  let now = 0;
  const lease = new HeartbeatLease(1000, () => now);
  now = 900;
  lease.accepted(800);
  lease.accepted(300); // sent earlier, answered last
  assert.equal(lease.runForMs(), 800 + 2000 - 900);
});

test('the lease starts from the registration it was given', () => {
  let now = 5000;
  const lease = new HeartbeatLease(1000, () => now, 4000);
  assert.equal(lease.runForMs(), 1000);
  now = 6000;
  assert.equal(lease.runForMs(), 0);
});

test('at the defaults, a heartbeat answered 4.8 s late keeps the jobs running', () => {
  // Heartbeats every 5 s, node timeout 15 s: supervision 5 s, a job runs to 10 s after a send.
  const s = supervisionMs(15_000, 5000);
  let now = 0;
  const lease = new HeartbeatLease(s, () => now, 0);
  lease.accepted(5000); // the second heartbeat, answered at once
  now = 10_000 + 4800; // the third, sent at 10 s, is answered 4.8 s late
  assert.ok(lease.runForMs() > 0, 'still within the deadline the second heartbeat gave');
  lease.accepted(10_000);
  assert.equal(lease.runForMs(), 10_000 + 2 * s - now);
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

test("a job process's watch stops at the deadline it was last given, not at a silence", async () => {
  const lapsed: number[] = [];
  const t0 = performance.now();
  const watch = watchDaemon(150, () => lapsed.push(performance.now() - t0));
  await new Promise((r) => setTimeout(r, 100));
  watch.until(1500); // a word at ≥ 100 ms: run to ≥ 1600 ms
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(lapsed.length, 0, 'the first deadline (150 ms) was moved');
  await new Promise((r) => setTimeout(r, 1600));
  assert.ok(lapsed.length >= 1, 'lapsed once the second deadline passed');
  assert.ok(lapsed[0]! >= 1600, `not before the deadline given: ${lapsed[0]}`);
});

test('a heartbeat is tried again evenly within its period, then the next one takes over', () => {
  assert.deepEqual(heartbeatRetryDelays(5000), [1000, 1000, 1000, 1000]);
  assert.deepEqual(heartbeatRetryDelays(500), [100, 100, 100, 100]);
  assert.deepEqual(heartbeatRetryDelays(20_000), Array(19).fill(1000));
  for (const h of [100, 333, 5000, 60_000]) {
    const total = heartbeatRetryDelays(h).reduce((a, b) => a + b, 0);
    assert.ok(total < h, `${h}: its tries end within the period (${total})`);
  }
});
