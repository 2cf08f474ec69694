/**
 * GET /v1/tenants/{id}/keys: an admin finds a leaked key by its prefix and revokes it by its id.
 * The tenant's keys only, oldest first, revoked ones too, never a secret; paged like other admin lists.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHarness, type Harness } from '../helpers/api-harness.js';

interface KeyRow {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** A tenant made by the admin, its first key, and `more` named keys made after it. */
async function tenantWithKeys(name: string, more: string[]) {
  const t = await h.admin(h.http.post('/v1/tenants')).send({ name }).expect(201);
  const keys = [
    { id: t.body.apiKeyId as string, prefix: t.body.apiKeyPrefix as string, apiKey: t.body.apiKey },
  ];
  for (const n of more) {
    const k = await h
      .admin(h.http.post(`/v1/tenants/${t.body.id}/keys`))
      .send({ name: n })
      .expect(201);
    keys.push({ id: k.body.id, prefix: k.body.prefix, apiKey: k.body.apiKey });
  }
  return { id: t.body.id as string, keys };
}

const list = async (tenantId: string, query = 'limit=100') =>
  (await h.admin(h.http.get(`/v1/tenants/${tenantId}/keys?${query}`)).expect(200)).body as {
    data: KeyRow[];
    nextCursor: string | null;
  };

test("an admin lists a tenant's keys oldest first, revoked ones included, never a secret", async () => {
  const acme = await tenantWithKeys('keys-acme', ['ci', 'laptop']);
  const other = await tenantWithKeys('keys-other', ['theirs']);
  await h.admin(h.http.delete(`/v1/tenants/${acme.id}/keys/${acme.keys[1]!.id}`)).expect(204);

  const page = await list(acme.id);
  assert.equal(page.nextCursor, null);
  assert.deepEqual(
    page.data.map((k) => [k.id, k.name, k.prefix]),
    [
      [acme.keys[0]!.id, 'default', acme.keys[0]!.prefix],
      [acme.keys[1]!.id, 'ci', acme.keys[1]!.prefix],
      [acme.keys[2]!.id, 'laptop', acme.keys[2]!.prefix],
    ],
  );
  for (const k of page.data)
    assert.deepEqual(Object.keys(k).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt']);
  assert.deepEqual(
    page.data.map((k) => k.revokedAt !== null),
    [false, true, false],
  );
  assert.match(page.data[1]!.revokedAt!, /^\d{4}-\d\d-\d\dT.*Z$/);
  assert.ok(page.data.every((k) => /^\d{4}-\d\d-\d\dT.*Z$/.test(k.createdAt)));

  const text = JSON.stringify(page);
  const rows = await h.api.deps.db.prisma.apiKey.findMany({ where: { tenantId: acme.id } });
  for (const k of acme.keys) assert.ok(!text.includes(k.apiKey), 'no secret');
  for (const r of rows) assert.ok(!text.includes(r.hash), 'no hash');

  // The other tenant's keys are its own; node keys are no tenant's.
  await h.admin(h.http.post('/v1/node-keys')).send({ name: 'a-node' }).expect(201);
  const ids = page.data.map((k) => k.id);
  for (const k of other.keys) assert.ok(!ids.includes(k.id));
  assert.deepEqual(
    (await list(acme.id)).data.map((k) => k.id),
    ids,
  );
  assert.deepEqual(
    (await list(other.id)).data.map((k) => k.id),
    other.keys.map((k) => k.id),
  );
});

test('lastUsedAt is when the key was last exchanged for a token; null until then', async () => {
  const t = await tenantWithKeys('keys-used', ['unused']);
  assert.ok((await list(t.id)).data.every((k) => k.lastUsedAt === null));
  const before = Date.now();
  await h.http.post('/v1/auth/token').send({ apiKey: t.keys[0]!.apiKey }).expect(200);
  // The exchange records last use without waiting for it.
  let rows = (await list(t.id)).data;
  for (let i = 0; i < 50 && rows[0]!.lastUsedAt === null; i++) {
    await sleep(20);
    rows = (await list(t.id)).data;
  }
  assert.ok(Date.parse(rows[0]!.lastUsedAt!) >= before - 1000, rows[0]!.lastUsedAt ?? 'null');
  assert.equal(rows[1]!.lastUsedAt, null);
});

test('pages of `limit`, the next one `after` the `nextCursor`, every key once', async () => {
  const t = await tenantWithKeys('keys-paged', ['a', 'b', 'c', 'd']);
  const seen: string[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 10; pages++) {
    const q: string = `limit=2${after ? `&after=${encodeURIComponent(after)}` : ''}`;
    const res = await list(t.id, q);
    assert.ok(res.data.length <= 2);
    seen.push(...res.data.map((k) => k.id));
    after = res.nextCursor;
    if (!after) break;
  }
  assert.equal(after, null);
  assert.deepEqual(
    seen,
    t.keys.map((k) => k.id),
  );
  for (const q of ['after=bm9wZQ', 'limit=0', 'limit=101', 'cursor=x']) {
    const res = await h.admin(h.http.get(`/v1/tenants/${t.id}/keys?${q}`)).expect(400);
    assert.equal(res.body.error.code, 'invalid_request', q);
  }
});

test('admin only: a tenant token is 403 (its own keys too), no credentials 401; unknown tenant 404', async () => {
  const t = await h.createTenant('keys-tenant');
  const own = await t.as(h.http.get(`/v1/tenants/${t.id}/keys`)).expect(403);
  assert.equal(own.body.error.code, 'forbidden');
  const anon = await h.http.get(`/v1/tenants/${t.id}/keys`).expect(401);
  assert.equal(anon.body.error.code, 'unauthorized');
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', 'keys-tenant']) {
    const res = await h.admin(h.http.get(`/v1/tenants/${id}/keys`)).expect(404);
    assert.equal(res.body.error.code, 'not_found', id);
    assert.equal(res.body.error.message, 'tenant not found', id);
  }
});
