import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

// The operator's default: endpoints on private or loopback addresses are refused.
let h: Harness;
let a: TestTenant;
let b: TestTenant;
before(async () => {
  // A bound short enough for the hung-resolver test below, and long for a lookup of localhost.
  h = await startHarness({ TIMESHARE_WEBHOOK_DNS_TIMEOUT_MS: '1000' });
  a = await h.createTenant();
  b = await h.createTenant();
});
after(() => h.close());

test('URLs on loopback or private addresses, or not http(s), are refused with param url', async () => {
  for (const url of [
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://10.0.0.5/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/hook',
    'file:///etc/passwd',
  ]) {
    const r = await a.as(h.http.post('/v1/webhooks')).send({ url }).expect(400);
    assert.equal(r.body.error.code, 'invalid_request', url);
    assert.equal(r.body.error.param, 'url', url);
  }
  const unknownEvent = await a
    .as(h.http.post('/v1/webhooks'))
    .send({ url: 'https://93.184.216.34/hook', events: ['job.exploded'] })
    .expect(400);
  assert.equal(unknownEvent.body.error.param, 'events.0');
});

test('a host whose DNS never answers is answered 503 dns_timeout in the bound, and nothing is stored', async () => {
  const c = await h.createTenant();
  h.api.deps.resolveHost = () => new Promise(() => undefined);
  try {
    const started = Date.now();
    const r = await c
      .as(h.http.post('/v1/webhooks'))
      .send({ url: 'https://hooks.example.test/hook' })
      .expect(503);
    assert.ok(Date.now() - started < 30_000, 'answered, not held');
    assert.equal(r.body.error.code, 'dns_timeout');
    assert.equal(r.body.error.param, 'url');
    assert.match(r.body.error.message, /hooks\.example\.test did not resolve within 1000 ms/);
    assert.ok(Number(r.headers['retry-after']) >= 1);
  } finally {
    delete h.api.deps.resolveHost;
  }
  assert.deepEqual((await c.as(h.http.get('/v1/webhooks')).expect(200)).body.data, []);
});

test('an event type listed twice is refused, naming the repeat, and nothing is stored', async () => {
  const c = await h.createTenant();
  const r = await c
    .as(h.http.post('/v1/webhooks'))
    .send({ url: 'https://93.184.216.34/hook', events: ['job.failed', 'job.queued', 'job.failed'] })
    .expect(400);
  assert.equal(r.body.error.code, 'invalid_request');
  assert.equal(r.body.error.param, 'events.2');
  assert.match(r.body.error.message, /job\.failed/);
  assert.deepEqual((await c.as(h.http.get('/v1/webhooks')).expect(200)).body.data, []);
});

test("an endpoint is its tenant's only: listing, deliveries, replay and delete are 404 to others", async () => {
  const created = await a
    .as(h.http.post('/v1/webhooks'))
    .send({ url: 'https://93.184.216.34/hook', events: ['job.failed', 'job.succeeded'], description: 'ops' })
    .expect(201);
  assert.match(created.body.secret, /^whsec_/);
  assert.deepEqual(created.body.events, ['job.failed', 'job.succeeded']);
  const id = created.body.id;
  assert.equal((await b.as(h.http.get('/v1/webhooks')).expect(200)).body.data.length, 0);
  await b.as(h.http.get(`/v1/webhooks/${id}/deliveries`)).expect(404);
  await b.as(h.http.delete(`/v1/webhooks/${id}`)).expect(404);
  await a
    .as(h.http.post(`/v1/webhooks/${id}/deliveries/00000000-0000-4000-8000-000000000000/replay`))
    .expect(404);
  assert.deepEqual((await a.as(h.http.get(`/v1/webhooks/${id}/deliveries`)).expect(200)).body.data, []);
  await a.as(h.http.delete(`/v1/webhooks/${id}`)).expect(204);
  assert.equal((await a.as(h.http.get('/v1/webhooks')).expect(200)).body.data.length, 0);
  await h.admin(h.http.get('/v1/webhooks')).expect(403);
});

test("an endpoint's deliveries come newest first in pages that together hold each once", async () => {
  const c = await h.createTenant();
  const id = (await c.as(h.http.post('/v1/webhooks')).send({ url: 'https://93.184.216.34/hook' }).expect(201))
    .body.id as string;
  await h.api.deps.db.pool.query(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, status, deadline)
     SELECT $1, e, 'job.queued', '{}', CASE WHEN e % 3 = 0 THEN 'failed' ELSE 'succeeded' END, now()
       FROM generate_series(1, 25) e`,
    [id],
  );
  const read = async (query: string) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const qs = `${query}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
      const r = await c.as(h.http.get(`/v1/webhooks/${id}/deliveries?${qs}`)).expect(200);
      ids.push(...(r.body.data as { eventId: string }[]).map((d) => d.eventId));
      cursor = r.body.nextCursor as string | null;
    } while (cursor !== null && ids.length < 100);
    return ids;
  };
  const all = Array.from({ length: 25 }, (_, i) => String(25 - i));
  assert.deepEqual(await read('limit=7'), all);
  assert.deepEqual(await read('limit=25'), all);
  assert.deepEqual(
    await read('limit=2&status=failed'),
    all.filter((e) => Number(e) % 3 === 0),
  );
  const forged = Buffer.from(`99999999999999999999|${id}`).toString('base64url');
  const bad = await c.as(h.http.get(`/v1/webhooks/${id}/deliveries?after=${forged}`)).expect(400);
  assert.equal(bad.body.error.param, 'after');
});

test('registrations at once cannot pass the 20-endpoint limit together', async () => {
  const c = await h.createTenant();
  // Several rounds: whether two inserts overlap is up to timing (the unguarded count let 22–32 of
  // 60 through in every round on this machine).
  for (let round = 0; round < 4; round++) {
    for (const e of (await c.as(h.http.get('/v1/webhooks')).expect(200)).body.data)
      await c.as(h.http.delete(`/v1/webhooks/${e.id}`)).expect(204);
    const statuses = await Promise.all(
      Array.from({ length: 60 }, async () => {
        const r = await fetch(`${h.api.url}/v1/webhooks`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${c.token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ url: 'https://93.184.216.34/hook' }),
        });
        await r.arrayBuffer();
        return r.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 201).length, 20, `answers: ${statuses.join(' ')}`);
    assert.ok(statuses.every((s) => s === 201 || s === 409));
    assert.equal((await c.as(h.http.get('/v1/webhooks')).expect(200)).body.data.length, 20);
  }
});
