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

test('weights outside 0.01–1000 are refused on creation and change, with the range in the message', async () => {
  const t = await h.createTenant('bounded');
  for (const weight of [1e-9, 0.009, 0, -1, 1000.5, 1e9]) {
    for (const req of [
      h.admin(h.http.patch(`/v1/tenants/${t.id}`)).send({ weight }),
      h.admin(h.http.post('/v1/tenants')).send({ name: 'too-light-or-heavy', weight }),
    ]) {
      const res = await req.expect(400);
      assert.deepEqual(
        res.body.error,
        {
          type: 'invalid_request_error',
          code: 'invalid_request',
          message: 'weight: must be a number between 0.01 and 1000',
          param: 'weight',
        },
        String(weight),
      );
    }
  }
  // Not a number at all: the same answer.
  const text = await h
    .admin(h.http.patch(`/v1/tenants/${t.id}`))
    .send({ weight: 'heavy' })
    .expect(400);
  assert.equal(text.body.error.message, 'weight: must be a number between 0.01 and 1000');
  const names = (await h.admin(h.http.get('/v1/tenants?limit=100')).expect(200)).body.data.map(
    (x: { name: string }) => x.name,
  );
  assert.ok(!names.includes('too-light-or-heavy'), 'no tenant was created');
  // The bounds themselves are accepted.
  for (const weight of [0.01, 1000]) {
    const ok = await h
      .admin(h.http.patch(`/v1/tenants/${t.id}`))
      .send({ weight })
      .expect(200);
    assert.equal(ok.body.weight, weight);
  }
  const light = await h
    .admin(h.http.post('/v1/tenants'))
    .send({ name: 'lightest', weight: 0.01 })
    .expect(201);
  assert.equal(light.body.weight, 0.01);
  // The document states them.
  const doc = (await h.http.get('/v1/openapi.json').expect(200)).body;
  for (const schema of ['UpdateTenant', 'CreateTenant']) {
    const w = doc.components.schemas[schema].properties.weight;
    assert.equal(w.minimum, 0.01, schema);
    assert.equal(w.maximum, 1000, schema);
  }
});

test('an unknown field is a 400 naming it, even where it stands for a required one (a typo)', async () => {
  const t = await h.createTenant('typo');
  const res = await h
    .admin(h.http.patch(`/v1/tenants/${t.id}`))
    .send({ wieght: 2 })
    .expect(400);
  assert.deepEqual(res.body.error, {
    type: 'invalid_request_error',
    code: 'invalid_request',
    message: 'unknown field "wieght"',
    param: 'wieght',
  });
  // Nothing sent at all names the field that is missing.
  const empty = await h
    .admin(h.http.patch(`/v1/tenants/${t.id}`))
    .send({})
    .expect(400);
  assert.equal(empty.body.error.param, 'weight');
  assert.equal((await h.admin(h.http.get(`/v1/tenants/${t.id}`)).expect(200)).body.weight, 1);
});
