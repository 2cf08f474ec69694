// Group acquire: all devices or none, fencing tokens per device, argument checks.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { DevicesBusyError, WaiterExistsError } from '../errors.js';
import type { Grant } from '../types.js';
import { LockFixture, queued } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const req = (devices: string[], job = 'job-a', stage = 'generate') => ({
  devices,
  job,
  stage,
  holder: 'node-1',
});

describe('device lock: group acquire', () => {
  it('grants every device of the group with a token each', async () => {
    const locks = fx.service();
    const g = await locks.acquire(req(['g0', 'g1', 'g2']));
    assert.deepEqual([...g.devices], ['g0', 'g1', 'g2']);
    for (const d of g.devices) {
      const s = await locks.inspect(d);
      assert.equal(s.hold?.job, 'job-a');
      assert.equal(s.hold?.token, g.tokens[d]);
      assert.equal(s.hold?.leaseUntil, g.leaseUntil);
    }
    assert.deepEqual(await locks.release(g), { released: ['g0', 'g1', 'g2'], lost: [] });
    assert.equal((await locks.inspect('g1')).hold, null);
  });

  it('is all-or-nothing: a partly busy group takes no device', async () => {
    const locks = fx.service();
    const a = await locks.acquire(req(['a1']));
    await assert.rejects(
      locks.acquire({ ...req(['a0', 'a1', 'a2'], 'job-b'), timeoutMs: 0 }),
      DevicesBusyError,
    );
    assert.equal((await locks.inspect('a0')).hold, null, 'a0 stayed free');
    assert.equal((await locks.inspect('a2')).hold, null, 'a2 stayed free');
    assert.deepEqual(await locks.listWaiters(), [], 'a try-acquire leaves no waiter');

    // Waiting for the group: nothing is taken until the whole set is free, then all at once.
    const q = queued();
    const pending = locks.acquire({ ...req(['a0', 'a1', 'a2'], 'job-b'), onQueued: q.onQueued });
    await q.promise;
    assert.equal((await locks.inspect('a0')).hold, null, 'no device taken one by one while waiting');
    await locks.release(a);
    const b = await pending;
    for (const d of ['a0', 'a1', 'a2']) assert.equal((await locks.inspect(d)).hold?.job, 'job-b');
    assert.equal(b.tokens.a1, (a.tokens.a1 ?? 0) + 1);
    await locks.release(b);
  });

  it('issues strictly increasing fencing tokens per device across grants', async () => {
    const locks = fx.service();
    const devices = ['t0', 't1', 't2', 't3'];
    const last = new Map<string, number>();
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 40; round++) {
      const subset = devices.filter(() => rand() < 0.5);
      if (subset.length === 0) continue;
      const g: Grant = await locks.acquire(req(subset, `job-${round}`));
      for (const d of subset) {
        const token = g.tokens[d] ?? -1;
        assert.ok(token > (last.get(d) ?? 0), `token of ${d} grew`);
        last.set(d, token);
      }
      if (round % 3 === 0) await locks.revoke(subset);
      else await locks.release(g);
    }
  });

  it('rejects bad requests before touching Redis', async () => {
    const locks = fx.service();
    await assert.rejects(locks.acquire(req([])), TypeError);
    await assert.rejects(locks.acquire(req(['x', 'x'])), TypeError);
    await assert.rejects(locks.acquire({ ...req(['x']), leaseMs: 0 }), TypeError);
    await assert.rejects(locks.acquire({ ...req(['x']), priority: Number.NaN }), TypeError);
    await assert.rejects(locks.acquire({ ...req(['x']), timeoutMs: -1 }), TypeError);
    await assert.rejects(locks.acquire({ ...req(['x']), job: '' }), TypeError);
    assert.throws(() => fx.service({ waiterTtlMs: 0 }), TypeError);
  });

  it('refuses a second live waiter with the same id', async () => {
    const locks = fx.service();
    const g = await locks.acquire(req(['w0']));
    const q = queued();
    const first = locks.acquire({ ...req(['w0']), waiterId: 'stage-x', onQueued: q.onQueued });
    await q.promise;
    await assert.rejects(locks.acquire({ ...req(['w0']), waiterId: 'stage-x' }), WaiterExistsError);
    await locks.release(g);
    await locks.release(await first);
  });
});
