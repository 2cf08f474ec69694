// Timeline reads: typed intervals with their end reasons, device filter, `since`, paging.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LockFixture, sleep } from './helpers.js';

const fx = new LockFixture();
after(() => fx.close());

const req = (devices: string[], job: string) => ({ devices, job, stage: 'infer', holder: 'node-7' });

describe('device lock: timeline', () => {
  it('records every hold with how it ended', async () => {
    const locks = fx.service();
    const a = await locks.acquire(req(['n7/0', 'n7/1'], 'released'));
    await locks.release(a);
    const b = await locks.acquire(req(['n7/0'], 'revoked'));
    await locks.revoke(['n7/0']);
    const c = await locks.acquire({ ...req(['n7/1'], 'lapsed'), leaseMs: 20 });
    while ((await locks.expireLapsed()).lapsed === 0) await sleep(10);
    const open = await locks.acquire(req(['n7/0'], 'open'));

    const { intervals, cursor } = await locks.readTimeline();
    assert.equal(cursor, null);
    // Tokens start from a time floor (lock-core.lua); count them from each device's first.
    const first = (d: string) => (a.tokens[d] ?? 0) - 1;
    assert.deepEqual(
      intervals.map((i) => [i.device, i.job, i.token - first(i.device), i.reason]),
      [
        ['n7/0', 'released', 1, 'released'],
        ['n7/1', 'released', 1, 'released'],
        ['n7/0', 'revoked', 2, 'revoked'],
        ['n7/1', 'lapsed', 2, 'lapsed'],
        ['n7/0', 'open', 3, null],
      ],
    );
    const head = intervals[0];
    assert.equal(head?.holder, 'node-7');
    assert.equal(head?.stage, 'infer');
    assert.equal(head?.waiterId, a.waiterId);
    assert.equal(head?.start, a.grantedAt);
    assert.ok((head?.end ?? 0) >= a.grantedAt);
    assert.equal(intervals[2]?.waiterId, b.waiterId);
    assert.equal(intervals[3]?.waiterId, c.waiterId);
    assert.equal(intervals[4]?.end, null);

    const node = await locks.readTimeline({ devicePrefix: 'n7/' });
    assert.equal(node.intervals.length, 5, 'one node: all of its devices');
    assert.deepEqual((await locks.readTimeline({ devicePrefix: 'n8/' })).intervals, []);
    const only1 = await locks.readTimeline({ devices: ['n7/1'] });
    assert.deepEqual(
      only1.intervals.map((i) => i.job),
      ['released', 'lapsed'],
    );
    await locks.release(open);
  });

  it('pages with a cursor and includes holds open since before `since`', async () => {
    const locks = fx.service();
    const long = await locks.acquire(req(['p/0'], 'long'));
    for (let i = 0; i < 5; i++) await locks.release(await locks.acquire(req(['p/1'], `short-${i}`)));
    const since = (await locks.acquire(req(['p/2'], 'probe'))).grantedAt + 1;
    await sleep(5);
    const later = await locks.acquire(req(['p/1'], 'later'));
    await locks.release(later);

    const window = await locks.readTimeline({ since, devices: ['p/0', 'p/1'] });
    assert.deepEqual(
      window.intervals.map((i) => [i.job, i.end === null]),
      [
        ['long', true],
        ['later', false],
      ],
    );

    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const page = await locks.readTimeline({ devices: ['p/1'], limit: 3, ...(after ? { after } : {}) });
      seen.push(...page.intervals.map((i) => i.job));
      if (!page.cursor) break;
      after = page.cursor;
    }
    assert.deepEqual(seen, ['short-0', 'short-1', 'short-2', 'short-3', 'short-4', 'later']);
    await locks.release(long);
  });

  // Found by a user: `limit` counted stream entries (a grant and an end are two) across every node
  // before keeping one node's, so `limit=1` showed a hold that had ended as open, and the pages
  // after it could not be asked for.
  it("counts the wanted devices' holds, each with its end, once across pages", async () => {
    const locks = fx.service();
    for (let i = 0; i < 6; i++)
      for (const node of ['a', 'b', 'c'])
        await locks.release(await locks.acquire(req([`${node}/0`, `${node}/1`], `${node}-${i}`)));
    const held = await locks.acquire(req(['a/0'], 'a-open'));

    const first = await locks.readTimeline({ devicePrefix: 'a/', limit: 1 });
    assert.deepEqual(
      first.intervals.map((i) => [i.job, i.device, i.reason]),
      [
        ['a-0', 'a/0', 'released'],
        ['a-0', 'a/1', 'released'],
      ],
      'a grant of two devices is listed whole (never split across pages)',
    );
    assert.ok(first.intervals.every((i) => i.end !== null && i.end >= i.start));

    for (const limit of [2, 3, 5, 100]) {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = await locks.readTimeline({ devicePrefix: 'a/', limit, ...(after ? { after } : {}) });
        assert.ok(page.intervals.length <= limit, `${page.intervals.length} holds > limit ${limit}`);
        for (const i of page.intervals) {
          assert.ok(i.device.startsWith('a/'));
          assert.equal(i.end === null, i.job === 'a-open', `${i.job} on ${i.device}: end ${i.end}`);
          seen.push(`${i.job} ${i.device}`);
        }
        after = page.cursor ?? undefined;
        pages++;
      } while (after !== undefined && pages < 50);
      const expected = [
        ...Array.from({ length: 6 }, (_, i) => [`a-${i} a/0`, `a-${i} a/1`]).flat(),
        'a-open a/0',
      ];
      assert.deepEqual(seen, expected, `limit ${limit}`);
    }
    await locks.release(held);
  });

  it('reads on through several chunks of the stream for one node among others', async () => {
    const locks = fx.service();
    for (let i = 0; i < 200; i++)
      for (const node of ['x', 'y', 'z'])
        await locks.release(await locks.acquire(req([`${node}/0`], `${node}-${i}`)));
    // 1,200 entries: the few holds of node x are spread over chunks of 256, 512 and more.
    for (const limit of [150, 1000]) {
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await locks.readTimeline({ devicePrefix: 'x/', limit, ...(after ? { after } : {}) });
        assert.ok(page.intervals.every((i) => i.end !== null && i.device === 'x/0'));
        seen.push(...page.intervals.map((i) => i.job));
        after = page.cursor ?? undefined;
      } while (after !== undefined && seen.length < 1000);
      assert.deepEqual(
        seen,
        Array.from({ length: 200 }, (_, i) => `x-${i}`),
        `limit ${limit}`,
      );
    }
  });

  it('lists a hold granted before `since` once, where it ended, whatever the page size', async () => {
    const locks = fx.service();
    const long = await locks.acquire(req(['w/0'], 'before'));
    // The grant's timeline entry takes Redis's clock at its XADD, a millisecond or two after the
    // script's TIME (grantedAt) when the script crosses a millisecond on a busy machine (a CI run
    // listed 'before' as granted inside the window with `grantedAt + 1`): leave it room.
    const since = long.grantedAt + 10;
    await sleep(20);
    for (let i = 0; i < 4; i++) await locks.release(await locks.acquire(req(['w/1'], `in-${i}`)));
    await locks.release(long);
    for (let i = 4; i < 8; i++) await locks.release(await locks.acquire(req(['w/1'], `in-${i}`)));
    for (const limit of [1, 3, 100]) {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = await locks.readTimeline({
          devices: ['w/0', 'w/1'],
          since,
          limit,
          ...(after ? { after } : {}),
        });
        for (const i of page.intervals) {
          assert.notEqual(i.end, null, i.job);
          seen.push(i.job);
        }
        after = page.cursor ?? undefined;
        pages++;
      } while (after !== undefined && pages < 50);
      assert.deepEqual(
        seen,
        ['in-0', 'in-1', 'in-2', 'in-3', 'before', 'in-4', 'in-5', 'in-6', 'in-7'],
        `limit ${limit}`,
      );
    }
  });
});
