// Tests that look at Redis keys directly (kept apart from the behaviour tests): the key layout
// in keys.ts/README is all there is, and no message is left behind for a waiter that died.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { lockKeys, wakeKey } from '../keys.js';
import { currentLibraryName, libraryIdleMs, libraryRegistryKey, loadLibrary } from '../scripts.js';
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
    const layout = /^(dev:.+|leases|waiter-data|seq|timeline|grace|wake:.+)$/;
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

describe('device lock: FUNCTION libraries of other versions', () => {
  it('deletes a library nobody loaded for a day; keeps recent and newly seen ones', async () => {
    const tag = randomBytes(4).toString('hex');
    const fake = (age: string) => `ts_device_lock_test${tag}_${age}`;
    const names = { idle: fake('idle'), recent: fake('recent'), unstamped: fake('unstamped') };
    const r = fx.redis;
    const listed = async () =>
      ((await r.function('LIST', 'LIBRARYNAME', `ts_device_lock_test${tag}_*`)) as unknown[][]).map((e) =>
        String(e[e.indexOf('library_name') + 1]),
      );
    const now = Date.now();
    try {
      for (const name of Object.values(names))
        await r.function(
          'LOAD',
          `#!lua name=${name}\nredis.register_function('${name}_f', function() return 1 end)`,
        );
      await r.hset(libraryRegistryKey, names.idle, now - libraryIdleMs - 1000, names.recent, now - 1000);

      await loadLibrary(r, now);

      assert.deepEqual((await listed()).sort(), [names.recent, names.unstamped].sort());
      const stamps = await r.hgetall(libraryRegistryKey);
      assert.equal(stamps[names.idle], undefined, 'the idle library leaves the registry too');
      // Other test files load the library meanwhile and may stamp first: a fresh stamp is enough.
      const fresh = (stamp: string | undefined) => stamp !== undefined && Number(stamp) >= now - 60_000;
      assert.ok(fresh(stamps[names.unstamped]), 'first seen now: its day of grace starts');
      assert.ok(fresh(stamps[currentLibraryName()]), 'the loaded version is stamped');
      // The live version's functions are there: a call works.
      const locks = fx.service();
      await locks.release(await locks.acquire(req(['lib0'], 'after-prune')));
    } finally {
      for (const name of Object.values(names)) await r.function('DELETE', name).catch(() => {});
      await r.hdel(libraryRegistryKey, ...Object.values(names));
    }
  });

  it('a process whose library was deleted loads it again on its next call', async () => {
    const locks = fx.service();
    await locks.release(await locks.acquire(req(['lib1'], 'before')));
    await fx.redis.hset(libraryRegistryKey, currentLibraryName(), 0);
    await fx.redis.function('DELETE', currentLibraryName());
    await locks.release(await locks.acquire(req(['lib1'], 'after')));
    const stamp = Number(await fx.redis.hget(libraryRegistryKey, currentLibraryName()));
    assert.ok(stamp > 0, 'the reload stamped the library anew');
  });
});
