/**
 * Whole numbers in query strings (and Last-Event-ID) are digits: `abc` answered "expected number,
 * received NaN", and `0x10`, `1e1` or an empty value were read as 16, 10 and 0.
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
    [`/v1/jobs/${jobId}/metrics?from_step=-1`, 'from_step'],
  ] as const) {
    const res = await t.as(h.http.get(path)).expect(400);
    assert.equal(res.body.error.code, 'invalid_request', path);
    assert.equal(res.body.error.param, param, path);
    assert.doesNotMatch(res.body.error.message, /NaN/, path);
  }
  const listed = await t.as(h.http.get('/v1/jobs?limit=1')).expect(200);
  assert.equal(listed.body.data.length, 1);
  const events = await t.as(h.http.get(`/v1/jobs/${jobId}/events?after=0&limit=10`)).expect(200);
  assert.ok(events.body.data.length >= 1);
});

test('Last-Event-ID is digits too', async () => {
  const res = await t
    .as(h.http.get(`/v1/jobs/${jobId}/events`))
    .set('Accept', 'text/event-stream')
    .set('Last-Event-ID', '0x10')
    .expect(400);
  assert.equal(res.body.error.param, 'Last-Event-ID');
});
