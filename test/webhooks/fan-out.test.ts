import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { CURSOR_ID, ensureCursor, fanOut } from '../../webhooks/fan-out.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('fan-out pages through every event, is idempotent, and moves the cursor only past settled events', async () => {
  const pool = h.api.deps.db.pool;
  await ensureCursor(pool);
  const t = await h.createTenant();
  const other = await h.createTenant();
  const hook = await t
    .as(h.http.post('/v1/webhooks'))
    .send({ url: 'https://93.184.216.34/hook', events: ['job.queued'] })
    .expect(201);
  for (let i = 0; i < 5; i++) {
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: `fan-${i}`, workflow: { task: { name: 'addition' } } })
      .expect(201);
  }
  // Another tenant's event: no delivery to this tenant's endpoint.
  await other
    .as(h.http.post('/v1/jobs'))
    .send({ name: 'theirs', workflow: { task: { name: 'addition' } } })
    .expect(201);
  const cursor = async () =>
    (await pool.query('SELECT last_event_id::text AS id FROM webhook_cursors WHERE id = $1', [CURSOR_ID]))
      .rows[0].id;

  const first = await fanOut(pool, { limit: 2, maxAgeHours: 72 });
  assert.deepEqual(first, { events: 6, deliveries: 5 }, 'three pages of two, the other tenant skipped');
  assert.equal(await cursor(), '0', 'events younger than the settle time stay ahead of the cursor');
  assert.deepEqual(await fanOut(pool, { limit: 2, maxAgeHours: 72 }), { events: 6, deliveries: 0 });

  await pool.query("UPDATE job_events SET created_at = created_at - interval '1 minute'");
  await fanOut(pool, { limit: 2, maxAgeHours: 72 });
  const max = (await pool.query('SELECT max(id)::text AS id FROM job_events')).rows[0].id;
  assert.equal(await cursor(), max);
  assert.deepEqual(await fanOut(pool, { limit: 2, maxAgeHours: 72 }), { events: 0, deliveries: 0 });
  const listed = await t.as(h.http.get(`/v1/webhooks/${hook.body.id}/deliveries`)).expect(200);
  assert.equal(listed.body.data.length, 5);
  assert.ok(listed.body.data.every((d: { status: string; eventType: string }) => d.status === 'pending'));
});

test('an endpoint with no events gets every subscribable type and no other', async () => {
  const pool = h.api.deps.db.pool;
  await ensureCursor(pool);
  const t = await h.createTenant();
  const all = await t.as(h.http.post('/v1/webhooks')).send({ url: 'https://93.184.216.34/all' }).expect(201);
  assert.deepEqual(all.body.events, []);
  const job = await t
    .as(h.http.post('/v1/jobs'))
    .send({ name: 'all-types', workflow: { task: { name: 'addition' } } })
    .expect(201);
  // The nine types docs/api.md lists (the submission wrote job.queued), then types the scheduler
  // and workers record for people and dashboards, which no endpoint can ask for by name.
  const subscribable = [
    'job.queued',
    'job.admitted',
    'job.placed',
    'job.running',
    'job.preempted',
    'job.checkpoint',
    'job.succeeded',
    'job.failed',
    'job.cancelled',
  ];
  for (const type of [...subscribable.slice(1), 'job.plan_fitted', 'job.preempting', 'job.rebalanced'])
    await pool.query('INSERT INTO job_events (job_id, type, data) VALUES ($1, $2, $3)', [
      job.body.id,
      type,
      '{}',
    ]);
  const refused = await t
    .as(h.http.post('/v1/webhooks'))
    .send({ url: 'https://93.184.216.34/fitted', events: ['job.plan_fitted'] })
    .expect(400);
  assert.equal(refused.body.error.param, 'events.0');

  await fanOut(pool, { limit: 100, maxAgeHours: 72 });
  const listed = await t.as(h.http.get(`/v1/webhooks/${all.body.id}/deliveries`)).expect(200);
  assert.deepEqual(
    listed.body.data.map((d: { eventType: string }) => d.eventType).sort(),
    [...subscribable].sort(),
  );
});
