// Tests that look at Redis keys directly (kept apart from the behaviour tests): the key layout
// in keys.ts/README is all there is, and no message is left behind for a waiter that died.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { lockKeys, wakeKey } from '../keys.js';
import { LockFixture, queued, sleep } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const req = (devices: string[], job: string) => ({ devices, job, stage: 'gen', holder: `h-${job}` });

describe('device lock: keys', () => {
  it('drops the unread grant of a waiter that died once its lease lapses', async () => {
    const live = fx.service();
    const dead = fx.service({ waiterTtlMs: 10_000 });
    const hold = await live.acquire(req(['k0'], 'holder'));
    const q = queued();
    dead.acquire({ ...req(['k0'], 'ghost'), leaseMs: 30, onQueued: q.onQueued }).catch(() => {});
    const ghostId = await q.promise;
    fx.kill(dead); // dies while queued: its entry stays (long ttl), so it is granted
    await live.release(hold);
    const wake = wakeKey(lockKeys(fx.prefix), ghostId);
    assert.equal(await fx.redis.llen(wake), 1, 'the grant waits, unread');
    while ((await live.expireLapsed()).lapsed === 0) await sleep(10);
    assert.equal(await fx.redis.exists(wake), 0, 'dropped with the lapsed hold');
    assert.equal((await live.inspect('k0')).hold, null);
  });

  it('uses only the documented keys', async () => {
    const locks = fx.service();
    const g = await locks.acquire(req(['m0', 'm1'], 'a'));
    const q = queued();
    const next = locks.acquire({ ...req(['m1'], 'b'), onQueued: q.onQueued });
    await q.promise;
    await locks.release(g);
    await locks.release(await next);
    const base = lockKeys(fx.prefix).base;
    const layout = /^(dev:.+|leases|waiter-data|seq|timeline|wake:.+)$/;
    let cursor = '0';
    const seen: string[] = [];
    do {
      const [nextCursor, keys] = await fx.redis.scan(cursor, 'MATCH', `${fx.prefix}*`, 'COUNT', 500);
      cursor = nextCursor;
      seen.push(...keys);
    } while (cursor !== '0');
    for (const k of seen) {
      assert.ok(k.startsWith(base), `${k} under ${base}`);
      assert.match(k.slice(base.length), layout);
    }
    assert.ok(seen.includes(`${base}dev:m1`) && seen.includes(`${base}timeline`));
  });

  it('keeps the timeline near its cap through the periodic scripts', async () => {
    const locks = fx.service({ timelineMaxLen: 10 });
    for (let i = 0; i < 150; i++) await locks.release(await locks.acquire(req(['t0'], `j${i}`)));
    const key = lockKeys(fx.prefix).timeline;
    const before = await fx.redis.xlen(key);
    assert.ok(before >= 300, 'acquire/release never trim');
    await locks.expireLapsed();
    // MAXLEN ~ trims whole stream nodes (100 entries by default): well below, not exactly 10.
    assert.ok((await fx.redis.xlen(key)) < before - 100);
  });
});
