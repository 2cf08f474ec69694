/**
 * Input the server cannot store or parse is a 4xx with the one error shape, never a 500: paths that
 * are not valid percent-encoding, numbers past their column, NUL in text, oversized headers, and a
 * method a path does not have.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let t: TestTenant;
let jobId: string;

before(async () => {
  h = await startHarness();
  t = await h.createTenant('hostile');
  jobId = (
    await t
      .as(h.http.post('/v1/jobs'))
      .send({ name: 'h', workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id;
});
after(() => h.close());

function assertError(body: unknown, code: string) {
  const e = (body as { error: Record<string, unknown> }).error;
  assert.equal(e.code, code, JSON.stringify(body));
  assert.equal(typeof e.type, 'string');
  assert.equal(typeof e.message, 'string');
  assert.ok(e.param === null || typeof e.param === 'string');
}

describe('a path that is not valid percent-encoding is a 400', () => {
  for (const [method, path] of [
    ['get', '/v1/jobs/%'],
    ['get', '/v1/tenants/%FF'],
    ['post', '/v1/nodes/%/heartbeat'],
    ['get', '/v1/jobs/%E0%A4%A/metrics'],
  ] as const) {
    test(`${method.toUpperCase()} ${path}, with and without credentials`, async () => {
      assertError((await h.http[method](path).expect(400)).body, 'invalid_request');
      assertError((await t.as(h.http[method](path)).expect(400)).body, 'invalid_request');
      assertError((await h.admin(h.http[method](path)).expect(400)).body, 'invalid_request');
    });
  }
});

test('query numbers past their column are a 400 naming the parameter', async () => {
  for (const q of ['from_step=3000000000', 'to_step=2147483648', 'from_step=1e300']) {
    const res = await t.as(h.http.get(`/v1/jobs/${jobId}/metrics?${q}`)).expect(400);
    assertError(res.body, 'invalid_request');
    assert.equal(res.body.error.param, q.split('=')[0]);
  }
  await t.as(h.http.get(`/v1/jobs/${jobId}/metrics?from_step=2147483647`)).expect(200);
  const events = await t.as(h.http.get(`/v1/jobs/${jobId}/events?after=99999999999999999999`)).expect(400);
  assert.equal(events.body.error.param, 'after');
});

test('a timeline `since` past the last time a Date holds is a 400 naming it', async () => {
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'timeline' }).expect(201);
  const token = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
  const node = (
    await h.http
      .post('/v1/nodes/register')
      .set('Authorization', `Bearer ${token.body.token}`)
      .send({
        name: 'timeline',
        devices: [{ index: 0, kind: 'cpu', memoryBytes: 1, freeMemoryBytes: 1, threads: 1 }],
      })
      .expect(200)
  ).body.id as string;
  for (const path of ['/v1/pools/default/timeline', `/v1/nodes/${node}/timeline`]) {
    for (const since of ['8640000000000001', '9007199254740991']) {
      const res = await h.admin(h.http.get(`${path}?since=${since}`));
      assert.equal(res.status, 400, `${path}?since=${since}: ${JSON.stringify(res.body)}`);
      assertError(res.body, 'invalid_request');
      assert.equal(res.body.error.param, 'since');
    }
  }
  await h.admin(h.http.get('/v1/pools/default/timeline?since=8640000000000000')).expect(200);
});

test('a cursor whose time PostgreSQL cannot hold is a 400 naming it', async () => {
  // Dates JavaScript parses but timestamptz does not hold (4713 BC – 294276 AD), and the
  // extended-year forms a cursor of this API never carries.
  for (const time of [
    '-271821-04-20T00:00:00.000Z',
    '-005000-01-01T00:00:00.000Z',
    '+275760-09-13T00:00:00.000Z',
  ]) {
    const after = Buffer.from(`${time}|${jobId}`).toString('base64url');
    for (const [path, as] of [
      ['/v1/jobs', t.as],
      ['/v1/tenants', h.admin],
      ['/v1/nodes', h.admin],
    ] as const) {
      const res = await as(h.http.get(`${path}?after=${after}`));
      assert.equal(res.status, 400, `${path} ${time}: ${JSON.stringify(res.body)}`);
      assertError(res.body, 'invalid_request');
      assert.equal(res.body.error.param, 'after');
    }
  }
});

describe('NUL in text the API stores or queries is a 400', () => {
  test('tenant names', async () => {
    const res = await h.admin(h.http.post('/v1/tenants')).send({ name: 'a\u0000b' }).expect(400);
    assert.equal(res.body.error.param, 'name');
  });
  test('API key and node-key names', async () => {
    const a = await h
      .admin(h.http.post(`/v1/tenants/${t.id}/keys`))
      .send({ name: 'ci\u0000' })
      .expect(400);
    assert.equal(a.body.error.param, 'name');
    const b = await h.admin(h.http.post('/v1/node-keys')).send({ name: '\u0000' }).expect(400);
    assert.equal(b.body.error.param, 'name');
    // Still optional, and still answered with a key when named properly.
    await h.admin(h.http.post('/v1/node-keys')).expect(201);
    await h
      .admin(h.http.post(`/v1/tenants/${t.id}/keys`))
      .send({ name: 'ci' })
      .expect(201);
  });
  test('job names and other job-spec strings, on both submission paths', async () => {
    for (const spec of [
      { name: 'x\u0000', workflow: { task: { name: 'addition' } } },
      { name: 'x', pool: 'p\u0000', workflow: { task: { name: 'addition' } } },
      { name: 'x', workflow: { task: { name: 'addition\u0000' } } },
      {
        name: 'x',
        workflow: { task: { name: 'addition' } },
        initialCheckpoint: { jobId: '\u0000', checkpointId: jobId },
      },
    ]) {
      const fast = await t.as(h.http.post('/v1/jobs')).send(spec).expect(400);
      assertError(fast.body, 'invalid_request');
      const slow = await t.as(h.http.post('/v1/jobs/')).send(spec).expect(400);
      assert.deepEqual(slow.body, fast.body);
    }
  });
  test('any body string, keys included, on every route that takes a body (jsonb cannot hold NUL either)', async () => {
    const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'n' }).expect(201);
    const tok = await h.http.post('/v1/auth/token').send({ apiKey: key.body.apiKey }).expect(200);
    const node = (r: import('supertest').Test) => r.set('Authorization', `Bearer ${tok.body.token}`);
    const devices = [{ index: 0, kind: 'cpu', memoryBytes: 1, freeMemoryBytes: 1 }];
    const body = { name: 'n1', labels: { zone: 'a\u0000' }, devices };
    const res = await node(h.http.post('/v1/nodes/register')).send(body).expect(400);
    assert.equal(res.body.error.param, 'labels.zone');
    const keyed = await node(h.http.post('/v1/nodes/register'))
      .send({ ...body, labels: { ['z\u0000']: 'a' } })
      .expect(400);
    assert.equal(keyed.body.error.param, 'labels.z\u0000');
    await node(h.http.post('/v1/nodes/register'))
      .send({ ...body, labels: { zone: 'a' } })
      .expect(200);
  });
  test('query values', async () => {
    assertError((await t.as(h.http.get('/v1/jobs?name=a%00b')).expect(400)).body, 'invalid_request');
    assertError(
      (await t.as(h.http.get(`/v1/jobs/${jobId}/metrics?name=%00`)).expect(400)).body,
      'invalid_request',
    );
  });
});

test('headers over the limit get a JSON 431', async () => {
  const res = await h.http.get('/healthz').set('X-Padding', 'a'.repeat(20_000)).expect(431);
  assertError(res.body, 'request_header_fields_too_large');
});

test('a method a known path does not have is a 405 with Allow', async () => {
  const res = await t.as(h.http.delete('/v1/jobs')).expect(405);
  assertError(res.body, 'method_not_allowed');
  assert.deepEqual(res.headers.allow?.split(', ').sort(), ['GET', 'HEAD', 'POST']);
  const put = await h.http.put(`/v1/jobs/${jobId}/cancel`).expect(405);
  assert.equal(put.headers.allow, 'POST');
  // An unknown path stays a 404.
  assertError((await t.as(h.http.delete('/v1/nope')).expect(404)).body, 'not_found');
});
