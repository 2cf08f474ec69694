/**
 * PATCH /v1/tenants/{id}: the admin changes a tenant's fair-share weight after creation (it was
 * fixed at creation: the dashboard could only show it). Admin only; the name stays.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { readSnapshot } from '../../scheduler/rounds/read-snapshot.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test("the admin changes a tenant's weight; the tenant and bad bodies are refused", async () => {
  const t = await h.createTenant('weighed');
  const changed = await h
    .admin(h.http.patch(`/v1/tenants/${t.id}`))
    .send({ weight: 3 })
    .expect(200);
  assert.equal(changed.body.weight, 3);
  assert.equal(changed.body.name, 'weighed');
  assert.equal((await h.admin(h.http.get(`/v1/tenants/${t.id}`)).expect(200)).body.weight, 3);
  // The scheduler's next round reads it.
  const read = await readSnapshot(h.api.deps.db.pool, 10_000);
  assert.equal(read.snapshot.tenants.find((x) => x.id === t.id)?.weight, 3);

  await t
    .as(h.http.patch(`/v1/tenants/${t.id}`))
    .send({ weight: 100 })
    .expect(403);
  for (const [body, param] of [
    [{ weight: 0 }, 'weight'],
    [{ weight: 1001 }, 'weight'],
    [{ weight: 'heavy' }, 'weight'],
    [{ weight: 2, name: 'renamed' }, 'name'],
  ] as const) {
    const res = await h
      .admin(h.http.patch(`/v1/tenants/${t.id}`))
      .send(body)
      .expect(400);
    assert.equal(res.body.error.code, 'invalid_request');
    assert.equal(res.body.error.param, param, JSON.stringify(body));
  }
  assert.equal((await h.admin(h.http.get(`/v1/tenants/${t.id}`)).expect(200)).body.weight, 3);
  await h
    .admin(h.http.patch('/v1/tenants/00000000-0000-4000-8000-000000000000'))
    .send({ weight: 2 })
    .expect(404);
});
