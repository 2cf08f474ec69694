/**
 * Redis keeps nothing on disk: a restart forgets every hold while the holders still use their
 * devices. Until the holders' next renew takes the holds back (LeaseKeeper), a device without a
 * token goes to nobody else, or a new job would load its working set onto a device another job
 * still computes on (before: granted at once, and the old holder crashed at its next renew).
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DevicesBusyError, type LockLostError } from '../errors.js';
import type { DeviceLockService } from '../device-lock-service.js';
import { LeaseKeeper } from '../lease-keeper.js';
import { LockFixture, deletePrefix, sleep } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const req = (devices: string[], job: string) => ({ devices, job, stage: 'train', holder: `holder-${job}` });
const graceKey = () => `${fx.prefix}lock:grace`;
/** A read on the service's own connection: what the fixture sent there before has run. */
const settled = (locks: DeviceLockService) => locks.inspect('any');

test('after a wipe the holder takes its devices back before anyone else can have them', async () => {
  const holderSide = fx.service({ defaultLeaseMs: 3000 });
  const newcomer = fx.service({ defaultLeaseMs: 3000 });
  const g = await holderSide.acquire(req(['g0', 'g1'], 'held'));
  const lost: LockLostError[] = [];
  const keeper = new LeaseKeeper(holderSide, g, { onLost: (e) => lost.push(e) });
  // The fixture declares the prefix fresh on each service's connection: the newcomer's must have
  // run before the wipe (in CI it once ran after it, declared the wiped prefix fresh, and the
  // newcomer was granted the device).
  await settled(newcomer);
  await deletePrefix(fx.redis, fx.prefix);

  // First after the wipe, before the holder's renew: held back, and the grace has begun.
  await assert.rejects(newcomer.acquire({ ...req(['g1'], 'newcomer'), timeoutMs: 0 }), DevicesBusyError);
  assert.ok(Number(await fx.redis.get(graceKey())) > 0, 'the grace is on');

  // The holder's next renew (a third of its lease) finds its hold wiped and takes it back.
  while (keeper.grant === g) await sleep(50);
  assert.equal(lost.length, 0);
  assert.equal((await holderSide.inspect('g1')).hold?.job, 'held');
  assert.ok((keeper.grant.tokens.g1 ?? 0) > (g.tokens.g1 ?? Infinity), 'under a new, higher token');

  // The newcomer queues behind the hold, and gets the device when the holder lets it go.
  let granted = false;
  const waiting = newcomer.acquire(req(['g1'], 'newcomer')).then((n) => {
    granted = true;
    return n;
  });
  await sleep(200);
  assert.equal(granted, false, 'still held');
  keeper.stop();
  await holderSide.release(keeper.grant);
  const next = await waiting;
  assert.equal((await newcomer.inspect('g1')).hold?.job, 'newcomer');
  await newcomer.release(next);
});

test('with no holder to come back, a waiter gets the device when the grace ends, not before', async () => {
  const locks = fx.service({ defaultLeaseMs: 600, waiterTtlMs: 300 });
  await settled(locks);
  await deletePrefix(fx.redis, fx.prefix);
  const g = await locks.acquire(req(['h0'], 'after-grace'));
  const graceUntil = Number(await fx.redis.get(graceKey()));
  assert.ok(graceUntil > 0);
  assert.ok(g.grantedAt >= graceUntil, `granted at ${g.grantedAt}, the grace ran until ${graceUntil}`);
  await locks.release(g);
});

test('a prefix declared fresh needs no grace, until its state is lost again', async () => {
  const locks = fx.service({ defaultLeaseMs: 60_000 });
  await settled(locks);
  await deletePrefix(fx.redis, fx.prefix);
  assert.equal(await locks.declareFresh(), true);
  assert.equal(await locks.declareFresh(), false, 'said once');
  const g = await locks.acquire({ ...req(['k0'], 'fresh'), timeoutMs: 0 });
  await locks.release(g);
  await deletePrefix(fx.redis, fx.prefix);
  await assert.rejects(locks.acquire({ ...req(['k0'], 'wiped'), timeoutMs: 0 }), DevicesBusyError);
});
