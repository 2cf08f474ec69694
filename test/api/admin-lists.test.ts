/** Admin lists page like GET /v1/jobs: `limit`, `after`, `{data, nextCursor}`. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

async function pageThrough(path: string, limit: number): Promise<{ id: string }[]> {
  const all: { id: string }[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const q: string = `limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`;
    const res = await h.admin(h.http.get(`${path}?${q}`)).expect(200);
    assert.ok(res.body.data.length <= limit);
    all.push(...res.body.data);
    after = res.body.nextCursor;
    if (!after) return all;
  }
  throw new Error('too many pages');
}

test('tenants, pools and nodes page through every row once, in order', async () => {
  for (let i = 0; i < 5; i++) await h.createTenant();
  const { prisma } = h.api.deps.db;
  for (const name of ['p-c', 'p-a', 'p-b']) {
    const pool = await prisma.pool.create({ data: { name, deviceType: 'cpu-virtual' } });
    await prisma.node.create({ data: { name: `n-${name}`, poolId: pool.id } });
  }
  const tenants = await pageThrough('/v1/tenants', 2);
  const whole = await h.admin(h.http.get('/v1/tenants?limit=100')).expect(200);
  assert.equal(whole.body.nextCursor, null);
  assert.deepEqual(
    tenants.map((t) => t.id),
    whole.body.data.map((t: { id: string }) => t.id),
  );
  assert.equal(tenants.length, 5);
  const pools = (await pageThrough('/v1/pools', 2)) as unknown as { name: string }[];
  assert.deepEqual(
    pools.map((p) => p.name),
    ['p-a', 'p-b', 'p-c'],
  );
  const nodes = (await pageThrough('/v1/nodes', 1)) as unknown as { name: string }[];
  assert.deepEqual(
    nodes.map((n) => n.name),
    ['n-p-c', 'n-p-a', 'n-p-b'],
  );
});

test('a cursor this API did not make, or a limit out of range, is a 400', async () => {
  for (const q of ['after=bm9wZQ', 'limit=0', 'limit=101', 'cursor=x']) {
    for (const path of ['/v1/tenants', '/v1/pools', '/v1/nodes']) {
      const res = await h.admin(h.http.get(`${path}?${q}`)).expect(400);
      assert.equal(res.body.error.code, 'invalid_request');
    }
  }
});
