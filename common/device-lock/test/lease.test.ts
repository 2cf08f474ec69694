// Leases and fencing: a lapsed lease is revoked and handed on with a higher token; a holder
// that lost its lock cannot renew or release it; the LeaseKeeper keeps a live lease alive.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LockLostError } from '../errors.js';
import { FencingGuard } from '../fencing-guard.js';
import { LeaseKeeper } from '../lease-keeper.js';
import { LockFixture, deletePrefix, queued, sleep } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const req = (devices: string[], job: string) => ({ devices, job, stage: 'train', holder: `holder-${job}` });

async function serverMs(): Promise<number> {
  const [sec, usec] = await fx.redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

async function untilFree(locks: ReturnType<LockFixture['service']>, device: string): Promise<void> {
  while ((await locks.inspect(device)).hold) {
    await sleep(20);
    await locks.expireLapsed();
  }
}

describe('device lock: leases and fencing', () => {
  it('revokes a lapsed lease and grants the next waiter a higher token', async () => {
    // No sweeper: the waiter's own heartbeats (every ttl/3 = 200 ms) notice the lapse.
    const locks = fx.service({ waiterTtlMs: 600 });
    const stale = await locks.acquire({ ...req(['l0', 'l1'], 'stale'), leaseMs: 100 });
    const q = queued();
    const next = await locks.acquire({ ...req(['l1'], 'next'), onQueued: q.onQueued });
    assert.ok((next.tokens.l1 ?? 0) > (stale.tokens.l1 ?? 0));
    assert.ok(next.grantedAt > stale.leaseUntil, 'granted only after the lease lapsed');

    const { intervals } = await locks.readTimeline({ devices: ['l0', 'l1'] });
    const ended = intervals.filter((i) => i.job === 'stale');
    assert.deepEqual(
      ended.map((i) => [i.device, i.reason]),
      [
        ['l0', 'lapsed'],
        ['l1', 'lapsed'],
      ],
      'both devices of the lapsed grant ended together',
    );
    await locks.release(next);
  });

  it('fails renew after the lease lapsed, with the devices and the reason', async () => {
    const locks = fx.service();
    const g = await locks.acquire({ ...req(['r0', 'r1'], 'slow'), leaseMs: 50 });
    await untilFree(locks, 'r0');
    const err = await locks.renew(g).then(
      () => assert.fail('renew succeeded after lapse'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof LockLostError);
    assert.equal(err.code, 'LOCK_LOST');
    assert.equal(err.job, 'slow');
    assert.deepEqual(
      err.lost.map((l) => [l.device, l.reason]),
      [
        ['r0', 'lapsed'],
        ['r1', 'lapsed'],
      ],
    );
    assert.match(err.message, /lost its lock on r0/);
    assert.deepEqual(await locks.release(g), { released: [], lost: ['r0', 'r1'] });
  });

  it('fails renew when the lapse is noticed by the renew itself', async () => {
    const locks = fx.service();
    const g = await locks.acquire({ ...req(['n0'], 'late'), leaseMs: 30 });
    // Wait on the server's clock without running any lock script (each would end the lapse).
    while ((await serverMs()) <= g.leaseUntil) await sleep(10);
    await assert.rejects(
      locks.renew(g),
      (e: unknown) => e instanceof LockLostError && e.lost[0]?.reason === 'lapsed',
    );
    const { intervals } = await locks.readTimeline({ devices: ['n0'] });
    assert.equal(intervals.at(-1)?.reason, 'lapsed');
  });

  it('fails renew after an admin revoke, and the next grant fences the old one', async () => {
    const locks = fx.service();
    const g = await locks.acquire(req(['v0', 'v1'], 'victim'));
    assert.deepEqual((await locks.revoke(['v0'])).released, ['v0']);
    await assert.rejects(
      locks.renew(g),
      (e: unknown) =>
        e instanceof LockLostError &&
        e.lost.length === 1 &&
        e.lost[0]?.device === 'v0' &&
        e.lost[0].reason === 'revoked',
    );
    // v1 still belongs to the grant: release ends it, v0 is reported lost.
    assert.deepEqual(await locks.release(g), { released: ['v1'], lost: ['v0'] });
    const again = await locks.acquire(req(['v0'], 'other'));
    assert.ok((again.tokens.v0 ?? 0) > (g.tokens.v0 ?? 0));
    await locks.release(again);
  });

  it('renew extends the lease of every device', async () => {
    const locks = fx.service();
    const g = await locks.acquire({ ...req(['e0', 'e1'], 'renewer'), leaseMs: 5000 });
    const r = await locks.renew(g, 60_000);
    assert.ok(r.leaseUntil > g.leaseUntil);
    for (const d of ['e0', 'e1']) assert.equal((await locks.inspect(d)).hold?.leaseUntil, r.leaseUntil);
    await locks.release(r);
  });

  it('LeaseKeeper keeps a lease alive and reports its loss', async () => {
    const locks = fx.service();
    const g = await locks.acquire({ ...req(['k0'], 'kept'), leaseMs: 600 });
    let lost: LockLostError | undefined;
    const gotLost = new Promise<void>((resolve) => {
      const keeper = new LeaseKeeper(locks, g, {
        intervalMs: 50,
        onLost: (e) => {
          lost = e;
          resolve();
        },
      });
      void (async () => {
        // Several leases long: only renewals keep it.
        while (Date.now() < g.grantedAt + 10_000 && keeper.grant.leaseUntil < g.leaseUntil + 1200)
          await sleep(50);
        const s = await locks.inspect('k0');
        assert.equal(s.hold?.token, g.tokens.k0, 'still held with the same token');
        await locks.revoke(['k0']);
      })();
    });
    await gotLost;
    assert.ok(lost instanceof LockLostError);
    assert.equal(lost.lost[0]?.reason, 'revoked');
  });

  it('LeaseKeeper gives the lease up when Redis stays unreachable past it', async () => {
    const locks = fx.service();
    const g = await locks.acquire({ ...req(['u0'], 'cut-off'), leaseMs: 150 });
    let errors = 0;
    const lost = await new Promise<LockLostError>((resolve) => {
      new LeaseKeeper(locks, g, { intervalMs: 30, onLost: resolve, onError: () => errors++ });
      fx.kill(locks); // its connection drops: every renew fails without an answer from Redis
    });
    assert.ok(errors > 0, 'transient failures reported before giving up');
    assert.deepEqual(
      lost.lost.map((l) => [l.device, l.reason]),
      [['u0', 'lapsed']],
    );
  });

  it('keeps tokens growing across a loss of the lock data in Redis', async () => {
    // Redis keeps nothing on disk here: a restart forgets every token counter. The next grant
    // must still outrank every token issued before, or the engine would refuse the new holder
    // (FencingGuard) while the old one, still running, would pass.
    const before = fx.service();
    // No grace after the wipe (wipe-grace.test.ts tests it): granted at once, as after a grace.
    const after = fx.service({ wipeGraceMs: 0 });
    const guard = new FencingGuard();
    const old = await before.acquire(req(['w0', 'w1'], 'before-wipe'));
    assert.ok(guard.acceptAll(old.tokens));
    await deletePrefix(fx.redis, fx.prefix); // mid-hold: holds, tokens, timeline, all gone
    const next = await after.acquire(req(['w0', 'w1'], 'after-wipe'));
    for (const d of ['w0', 'w1']) {
      const t = next.tokens[d] ?? 0;
      assert.ok(Number.isSafeInteger(t), `${d}: ${t} is a safe integer`);
      assert.ok(t > (old.tokens[d] ?? Infinity), `${d}: ${t} > ${old.tokens[d]}`);
    }
    assert.ok(guard.acceptAll(next.tokens), 'the new holder passes the engine');
    assert.equal(guard.accept('w0', old.tokens.w0 ?? 0), false, 'the old holder is refused');
    await assert.rejects(before.renew(old), LockLostError);
    assert.deepEqual((await before.release(old)).lost, ['w0', 'w1']);
    assert.deepEqual((await after.release(next)).lost, []);
  });

  it('LeaseKeeper takes a hold Redis forgot again, unless someone else took the device first', async () => {
    // No grace after a wipe, so that another holder can be granted the device before the renew
    // (with the grace, the keeper takes it back first: wipe-grace.test.ts).
    const locks = fx.service({ wipeGraceMs: 0 });
    const g = await locks.acquire({ ...req(['f0'], 'forgotten'), leaseMs: 600 });
    const lostOnes: LockLostError[] = [];
    const keeper = new LeaseKeeper(locks, g, { intervalMs: 50, onLost: (e) => lostOnes.push(e) });
    await deletePrefix(fx.redis, fx.prefix);
    while (keeper.grant === g || !(await locks.inspect('f0')).hold) await sleep(20);
    assert.equal(lostOnes.length, 0, 'not lost: nobody else had the device');
    const now = keeper.grant;
    assert.ok((now.tokens.f0 ?? 0) > (g.tokens.f0 ?? Infinity), 'under a new, higher token');
    assert.equal((await locks.inspect('f0')).hold?.token, now.tokens.f0);

    // Forgotten again, and another holder is granted the device before the next renew.
    await deletePrefix(fx.redis, fx.prefix);
    const other = await locks.acquire({ ...req(['f0'], 'first-after-wipe'), leaseMs: 600 });
    while (lostOnes.length === 0) await sleep(20);
    assert.equal(lostOnes[0]!.lost[0]?.reason, 'superseded');
    assert.equal((await locks.inspect('f0')).hold?.job, 'first-after-wipe');
    await locks.release(other);
  });
});
