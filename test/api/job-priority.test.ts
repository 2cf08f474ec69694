/**
 * PATCH /v1/jobs/{id} {priority}: the row, the spec and the event change together; the next round
 * orders the tenant's jobs by it; idempotent; 400 for anything else in the body, 409 once finished,
 * 404 for another tenant's job.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPolicy } from '../../scheduler/core/policy.js';
import { publishQueueViews } from '../helpers/queue-views.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
let other: TestTenant;

before(async () => {
  h = await startHarness();
  t = await h.createTenant('reprioritizer');
  other = await h.createTenant('onlooker');
});
after(() => h.close());

const submit = async (name: string) =>
  (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;

const events = async (id: string) =>
  (
    (await t.as(h.http.get(`/v1/jobs/${id}/events`)).expect(200)).body.data as {
      type: string;
      data: Record<string, unknown>;
    }[]
  ).filter((e) => e.type === 'job.priority_changed');

test("a raised priority moves a job ahead of its tenant's older ones at the next round", async () => {
  const first = await submit('older');
  const second = await submit('newer');
  await publishQueueViews(h, defaultPolicy);
  const position = async (id: string) =>
    (await t.as(h.http.get(`/v1/jobs/${id}`)).expect(200)).body.queuePosition as number;
  assert.ok((await position(first)) < (await position(second)), 'arrival order first');

  const r = await t
    .as(h.http.patch(`/v1/jobs/${second}`))
    .send({ priority: 'high' })
    .expect(200);
  assert.equal(r.body.priority, 'high');
  assert.equal(r.body.spec.priority, 'high');
  const row = await h.api.deps.db.pool.query(`SELECT priority FROM jobs WHERE id = $1`, [second]);
  assert.equal(row.rows[0].priority, 2);
  assert.deepEqual(
    (await events(second)).map((e) => [e.data.from, e.data.to]),
    [['normal', 'high']],
  );
  await publishQueueViews(h, defaultPolicy);
  assert.ok((await position(second)) < (await position(first)), 'the raised one first');

  // The same priority again: the job unchanged, no second event.
  await t
    .as(h.http.patch(`/v1/jobs/${second}`))
    .send({ priority: 'high' })
    .expect(200);
  assert.equal((await events(second)).length, 1);
});

test('anything but a known priority is 400, writing nothing', async () => {
  const id = await submit('strict');
  for (const [body, param] of [
    [{ priority: 'mega' }, 'priority'],
    [{ priority: 'high', name: 'renamed' }, null],
    [{}, 'priority'],
  ] as const) {
    const r = await t
      .as(h.http.patch(`/v1/jobs/${id}`))
      .send(body)
      .expect(400);
    assert.equal(r.body.error.code, 'invalid_request', JSON.stringify(r.body));
    if (param) assert.equal(r.body.error.param, param);
  }
  const job = (await t.as(h.http.get(`/v1/jobs/${id}`)).expect(200)).body;
  assert.equal(job.priority, 'normal');
  assert.deepEqual(await events(id), []);
});

test("a finished job is 409; another tenant's job is 404; the admin key is 403", async () => {
  const id = await submit('settled');
  await other
    .as(h.http.patch(`/v1/jobs/${id}`))
    .send({ priority: 'urgent' })
    .expect(404);
  await h
    .admin(h.http.patch(`/v1/jobs/${id}`))
    .send({ priority: 'urgent' })
    .expect(403);
  await t.as(h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
  const r = await t
    .as(h.http.patch(`/v1/jobs/${id}`))
    .send({ priority: 'urgent' })
    .expect(409);
  assert.equal(r.body.error.code, 'conflict');
  assert.equal((await t.as(h.http.get(`/v1/jobs/${id}`)).expect(200)).body.priority, 'normal');
});
