// The device-lock timelines of a node and of a pool list holds, `limit` at a time, each hold once
// and with its end once it has ended. Found by a user: `limit` counted stream entries (a grant and
// an end are two) of every node before keeping one node's, so `?limit=1` showed an ended hold as
// open, and no cursor led to the next page.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { registerTestNode } from '../helpers/test-node.js';

let h: Harness;
let mine: string;
let other: string;
const HOLDS = 7;

before(async () => {
  h = await startHarness();
  mine = (await registerTestNode(h, 'timeline-mine')).id;
  other = (await registerTestNode(h, 'timeline-other')).id;
  const locks = h.api.deps.locks;
  // The test's own prefix: nothing held a device there before (else the first grant waits out a lease).
  await locks.declareFresh();
  // The two nodes' holds interleave in the one stream the lock writes.
  for (let i = 0; i < HOLDS; i++)
    for (const [node, job] of [
      [mine, `mine-${i}`],
      [other, `other-${i}`],
    ] as const)
      await locks.release(await locks.acquire({ devices: [`${node}/0`], job, stage: 'train', holder: node }));
});
after(() => h.close());

interface Hold {
  job: string;
  end: string | null;
  reason: string | null;
}

async function everyPage(path: string, limit: number, query = ''): Promise<Hold[][]> {
  const pages: Hold[][] = [];
  let cursor: string | null = null;
  do {
    const qs = `limit=${limit}${query}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
    const res = await h.admin(h.http.get(`${path}?${qs}`)).expect(200);
    pages.push(res.body.data as Hold[]);
    cursor = res.body.nextCursor as string | null;
  } while (cursor !== null && pages.length < 100);
  return pages;
}

test("a node's timeline: its holds, `limit` a page, each once and ended", async () => {
  const first = await h.admin(h.http.get(`/v1/nodes/${mine}/timeline?limit=1`)).expect(200);
  assert.deepEqual(
    (first.body.data as Hold[]).map((d) => [d.job, d.reason]),
    [['mine-0', 'released']],
  );
  assert.notEqual(first.body.data[0].end, null);
  assert.equal(typeof first.body.nextCursor, 'string');

  for (const limit of [1, 2, 3, 100]) {
    const pages = await everyPage(`/v1/nodes/${mine}/timeline`, limit);
    assert.ok(pages.every((p) => p.length <= limit));
    assert.deepEqual(
      pages.flat().map((d) => d.job),
      Array.from({ length: HOLDS }, (_, i) => `mine-${i}`),
      `limit ${limit}`,
    );
    assert.ok(pages.flat().every((d) => d.end !== null && d.reason === 'released'));
  }
});

test("a pool's timeline pages the same way", async () => {
  const pages = await everyPage('/v1/pools/default/timeline', 4, '&since=0');
  assert.equal(pages.length, Math.ceil((2 * HOLDS) / 4));
  assert.deepEqual(new Set(pages.flat().map((d) => d.job)).size, 2 * HOLDS, 'every hold of both nodes, once');
  assert.equal(pages.flat().length, 2 * HOLDS);
  assert.ok(pages.flat().every((d) => d.end !== null));
});

test('a cursor this API did not make is a 400 naming `after`', async () => {
  for (const path of [`/v1/nodes/${mine}/timeline`, '/v1/pools/default/timeline'])
    for (const bad of ['x', '12-0', '12-0~abc', `${'9'.repeat(20)}-0~1`]) {
      const res = await h.admin(h.http.get(`${path}?after=${encodeURIComponent(bad)}`));
      assert.equal(res.status, 400, `${path} after=${bad}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.param, 'after');
    }
});
