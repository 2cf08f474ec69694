/**
 * Whole numbers in query strings (and Last-Event-ID) are digits: `abc` answered "expected number,
 * received NaN", and `0x10`, `1e1` or an empty value were read as 16, 10 and 0. Digits out of range
 * say the range: they were answered "expected a whole number, written in digits (once)" (zod 4's
 * schema-level error replaced the bounds' messages).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
let jobId: string;

before(async () => {
  h = await startHarness();
  t = await h.createTenant('counter');
  jobId = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'q', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
});
after(() => h.close());

test('a number written any other way than in digits is a 400 naming the parameter', async () => {
  for (const [path, param] of [
    ['/v1/jobs?limit=abc', 'limit'],
    ['/v1/jobs?limit=0x10', 'limit'],
    ['/v1/jobs?limit=1e1', 'limit'],
    ['/v1/jobs?limit=', 'limit'],
    ['/v1/jobs?limit=1&limit=2', 'limit'],
    [`/v1/jobs/${jobId}/events?after=0x10`, 'after'],
    [`/v1/jobs/${jobId}/events?after=abc`, 'after'],
    [`/v1/jobs/${jobId}/events?after=-1`, 'after'],
    [`/v1/jobs/${jobId}/events?after=1&after=2`, 'after'],
    [`/v1/jobs/${jobId}/events?after=`, 'after'],
    [`/v1/jobs/${jobId}/metrics?from_step=-1`, 'from_step'],
  ] as const) {
    const res = await t.as(h.http.get(path)).expect(400);
    assert.equal(res.body.error.code, 'invalid_request', path);
    assert.equal(res.body.error.param, param, path);
    assert.doesNotMatch(res.body.error.message, /NaN/, path);
    assert.match(res.body.error.message, /expected a whole number, written in digits \(once\)/, path);
  }
  const listed = await t.as(h.http.get('/v1/jobs?limit=1')).expect(200);
  assert.equal(listed.body.data.length, 1);
  const events = await t.as(h.http.get(`/v1/jobs/${jobId}/events?after=0&limit=10`)).expect(200);
  assert.ok(events.body.data.length >= 1);
});

interface DocParam {
  name: string;
  in: string;
  schema?: { type?: string; minimum?: number; maximum?: number };
}

test('every whole-number query parameter out of its range is a 400 that says the range', async () => {
  const doc = (await h.http.get('/v1/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, { parameters?: DocParam[] }>>;
  };
  let checked = 0;
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const p of op.parameters ?? []) {
        if (p.in !== 'query' || p.schema?.type !== 'integer') continue;
        const { minimum: min, maximum: max } = p.schema;
        assert.ok(method === 'get' && min !== undefined && max !== undefined, `${template} ${p.name}`);
        const path = template
          .replace('/v1/jobs/{id}', `/v1/jobs/${jobId}`)
          .replace('{name}', 'default')
          .replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
        const as = path.startsWith('/v1/jobs') || path.startsWith('/v1/webhooks') ? t.as : h.admin;
        const values = [String(max + 1), '9'.repeat(30), ...(min > 0 ? [String(min - 1)] : [])];
        for (const v of values) {
          const url = `${path}?${p.name}=${v}`;
          const res = await as(h.http.get(url));
          assert.equal(res.status, 400, url);
          assert.equal(res.body.error.code, 'invalid_request', url);
          assert.equal(res.body.error.param, p.name, url);
          assert.equal(res.body.error.message, `${p.name}: must be between ${min} and ${max}`, url);
        }
        checked++;
      }
    }
  }
  assert.ok(checked >= 17, `checked ${checked} parameters`);
  // The cases the report named.
  for (const [url, message] of [
    ['/v1/jobs?limit=0', 'limit: must be between 1 and 100'],
    ['/v1/jobs?limit=1000', 'limit: must be between 1 and 100'],
    [`/v1/jobs/${jobId}/metrics?limit=10001`, 'limit: must be between 1 and 10000'],
  ] as const) {
    const res = await t.as(h.http.get(url)).expect(400);
    assert.equal(res.body.error.message, message, url);
  }
});

test('an event cursor past the largest id says its range', async () => {
  const max = 2n ** 63n - 1n;
  const page = await t.as(h.http.get(`/v1/jobs/${jobId}/events?after=${max + 1n}`)).expect(400);
  assert.equal(page.body.error.param, 'after');
  assert.equal(page.body.error.message, `after: must be between 0 and ${max}`);
  await t.as(h.http.get(`/v1/jobs/${jobId}/events?after=${max}`)).expect(200);
  const stream = await t
    .as(h.http.get(`/v1/jobs/${jobId}/events/stream`))
    .set('Last-Event-ID', String(max + 1n))
    .expect(400);
  assert.equal(stream.body.error.param, 'Last-Event-ID');
  assert.equal(stream.body.error.message, `Last-Event-ID: must be between 0 and ${max}`);
});

test('Last-Event-ID is digits too', async () => {
  const res = await t
    .as(h.http.get(`/v1/jobs/${jobId}/events`))
    .set('Accept', 'text/event-stream')
    .set('Last-Event-ID', '0x10')
    .expect(400);
  assert.equal(res.body.error.param, 'Last-Event-ID');
  for (const url of [`/v1/jobs/${jobId}/events/stream`, `/v1/jobs/${jobId}/events/stream?after=`]) {
    const bad = await t
      .as(h.http.get(url))
      .set('Last-Event-ID', url.endsWith('=') ? '1' : '-1')
      .expect(400);
    assert.equal(bad.body.error.param, url.endsWith('=') ? 'after' : 'Last-Event-ID', url);
    assert.match(bad.body.error.message, /expected a whole number, written in digits \(once\)/, url);
  }
});
