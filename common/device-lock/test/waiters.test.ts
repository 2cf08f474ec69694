// Waiter policy: priority, then readiness, then arrival; a blocked waiter reserves its devices
// against lower ones; reordering, cancellation and dead waiters.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AcquireAbortedError, AcquireTimeoutError, WaiterNotFoundError } from '../errors.js';
import type { DeviceLockService } from '../device-lock-service.js';
import type { AcquireRequest, Grant } from '../types.js';
import { LockFixture, queued, sleep } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const req = (devices: string[], job: string, extra: Partial<AcquireRequest> = {}): AcquireRequest => ({
  devices,
  job,
  stage: 'generate',
  holder: `holder-${job}`,
  ...extra,
});

/** Queues `req` and resolves once it is queued; `grant` settles when it is granted. */
async function enqueue(locks: DeviceLockService, r: AcquireRequest) {
  const q = queued();
  const grant = locks.acquire({ ...r, onQueued: q.onQueued });
  const waiterId = await Promise.race([q.promise, grant.then((g) => g.waiterId)]);
  return { waiterId, grant };
}

async function recordAndRelease(locks: DeviceLockService, order: string[], g: Grant): Promise<void> {
  order.push(g.job);
  await locks.release(g);
}

describe('device lock: waiters', () => {
  it('grants in order of priority, then readiness, then arrival', async () => {
    const locks = fx.service();
    const hold = await locks.acquire(req(['o0'], 'first'));
    const order: string[] = [];
    const specs: [string, number, number][] = [
      ['low-a', 0, 0],
      ['high-unready', 5, 0],
      ['low-b', 0, 0],
      ['high-ready', 5, 1],
      ['mid', 2, 0.5],
      ['low-ready', 0, 1],
    ];
    const pending: Promise<void>[] = [];
    for (const [job, priority, readiness] of specs) {
      const { grant } = await enqueue(locks, req(['o0'], job, { priority, readiness }));
      // Each holder releases as soon as it is granted, handing o0 to the next in line.
      pending.push(grant.then((g) => recordAndRelease(locks, order, g)));
    }
    await locks.release(hold);
    await Promise.all(pending);
    assert.deepEqual(order, ['high-ready', 'high-unready', 'mid', 'low-ready', 'low-a', 'low-b']);
  });

  it('setPriority reorders a waiting request', async () => {
    const locks = fx.service();
    const hold = await locks.acquire(req(['p0'], 'first'));
    const order: string[] = [];
    const a = await enqueue(locks, req(['p0'], 'a', { priority: 1 }));
    const b = await enqueue(locks, req(['p0'], 'b', { priority: 1 }));
    await locks.setPriority(b.waiterId, 3, 0);
    assert.deepEqual(
      (await locks.listWaiters()).map((w) => w.job),
      ['b', 'a'],
    );
    const done = [a, b].map((w) => w.grant.then((g) => recordAndRelease(locks, order, g)));
    await locks.release(hold);
    await Promise.all(done);
    assert.deepEqual(order, ['b', 'a']);
    await assert.rejects(locks.setPriority(b.waiterId, 1), WaiterNotFoundError);
  });

  it('a blocked waiter reserves its devices; non-overlapping lower work backfills', async () => {
    const locks = fx.service();
    const hold = await locks.acquire(req(['x0'], 'holder'));
    const wide = await enqueue(locks, req(['x0', 'x1'], 'wide', { priority: 5 }));
    // x1 is free but wanted by the blocked higher-priority waiter: the low one must not take it.
    const narrow = await enqueue(locks, req(['x1'], 'narrow', { priority: 1 }));
    // x2 is wanted by nobody ahead: granted at once although lower waiters are queued.
    const other = await locks.acquire(req(['x2'], 'other', { priority: 0, timeoutMs: 0 }));
    assert.equal((await locks.inspect('x1')).hold, null, 'x1 stays free for the wide waiter');
    assert.deepEqual(
      (await locks.listWaiters()).map((w) => w.job),
      ['wide', 'narrow'],
    );
    const order: string[] = [];
    const w = wide.grant.then((g) => (order.push('wide'), g));
    const n = narrow.grant.then((g) => (order.push('narrow'), g));
    await locks.release(hold);
    await locks.release(await w);
    await locks.release(await n);
    await locks.release(other);
    assert.deepEqual(order, ['wide', 'narrow']);
  });

  it('a timed-out waiter is removed and stops blocking lower waiters', async () => {
    const locks = fx.service();
    const hold = await locks.acquire(req(['c0'], 'holder'));
    const high = await enqueue(locks, req(['c0', 'c1'], 'high', { priority: 9, timeoutMs: 150 }));
    const low = await enqueue(locks, req(['c1'], 'low'));
    const err = await high.grant.then(
      () => assert.fail('granted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AcquireTimeoutError);
    assert.equal(err.code, 'LOCK_ACQUIRE_TIMEOUT');
    assert.equal(err.waiterId, high.waiterId);
    const g: Grant = await low.grant; // c1 was only reserved by the cancelled waiter
    assert.equal(g.job, 'low');
    await locks.release(g);
    await locks.release(hold);
  });

  it('an aborted waiter is removed; an already aborted signal never queues', async () => {
    const locks = fx.service();
    const hold = await locks.acquire(req(['s0'], 'holder'));
    const ac = new AbortController();
    const w = await enqueue(locks, req(['s0'], 'aborted', { signal: ac.signal }));
    ac.abort();
    await assert.rejects(w.grant, AcquireAbortedError);
    await assert.rejects(locks.acquire(req(['s0'], 'never', { signal: ac.signal })), AcquireAbortedError);
    const ext = await enqueue(locks, req(['s0'], 'cancelled-by-scheduler'));
    assert.equal(await locks.cancelWaiter(ext.waiterId), true);
    await assert.rejects(ext.grant, AcquireAbortedError);
    assert.equal(await locks.cancelWaiter(ext.waiterId), false);
    assert.deepEqual(await locks.listWaiters(), []);
    await locks.release(hold);
  });

  it('a waiter whose process died is dropped and does not block others', async () => {
    const live = fx.service({ waiterTtlMs: 1500 });
    const dead = fx.service({ waiterTtlMs: 150 });
    const hold = await live.acquire(req(['d0'], 'holder'));
    const ghost = await enqueue(dead, req(['d0', 'd1'], 'ghost', { priority: 9 }));
    ghost.grant.catch(() => {}); // its connection is about to vanish
    // The process dies: no heartbeat, no cancel, its entry stays until it expires.
    fx.kill(dead);
    const low = await enqueue(live, req(['d1'], 'low'));
    const g = await low.grant; // the live waiter's own heartbeats drop the ghost
    assert.equal(g.job, 'low');
    assert.ok(!(await live.listWaiters()).some((w) => w.waiterId === ghost.waiterId));
    await live.release(g);
    await live.release(hold);
  });

  it("abandonHolder ends a dead holder's holds and waiters at once, and hands its devices on", async () => {
    // Long leases and waiter TTLs: without abandonHolder nothing would move for a minute.
    const live = fx.service({ defaultLeaseMs: 60_000, waiterTtlMs: 60_000 });
    const dead = fx.service({ defaultLeaseMs: 60_000, waiterTtlMs: 60_000 });
    const other = await live.acquire(req(['a1'], 'other'));
    const held = await dead.acquire(req(['a0'], 'dead-job', { holder: 'node-1:4242' }));
    const waiting = await enqueue(dead, req(['a1'], 'dead-job', { holder: 'node-1:4242', priority: 9 }));
    waiting.grant.catch(() => {});
    fx.kill(dead);
    const next = await enqueue(live, req(['a0'], 'next'));

    assert.deepEqual(await live.abandonHolder('node-1:4242'), { holdsEnded: 1, waitersDropped: 1 });
    const g = await next.grant;
    assert.ok((g.tokens.a0 ?? 0) > (held.tokens.a0 ?? 0), 'handed on with a higher token');
    assert.ok(!(await live.listWaiters()).some((w) => w.waiterId === waiting.waiterId));
    // The dead waiter is no longer first in line for a1: a live one behind it gets it.
    const after = await enqueue(live, req(['a1'], 'after'));
    await live.release(other);
    assert.equal((await after.grant).job, 'after');
    const { intervals } = await live.readTimeline({ devices: ['a0'] });
    assert.equal(intervals.find((i) => i.job === 'dead-job')?.reason, 'revoked');
    // Nothing of another holder is touched; a second call finds nothing.
    assert.deepEqual(await live.abandonHolder('node-1:4242'), { holdsEnded: 0, waitersDropped: 0 });
    await live.release(g);
    await live.release(await after.grant);
  });

  it('the sweeper drops stale waiters even when nobody else is waiting', async () => {
    const live = fx.service();
    const dead = fx.service({ waiterTtlMs: 60 });
    const hold = await live.acquire(req(['z0'], 'holder'));
    const ghost = await enqueue(dead, req(['z0'], 'ghost'));
    ghost.grant.catch(() => {});
    fx.kill(dead);
    let dropped = 0;
    while (dropped === 0) {
      await sleep(30);
      dropped += (await live.expireLapsed()).dropped;
    }
    assert.deepEqual(await live.listWaiters(), []);
    await live.release(hold);
  });
});
