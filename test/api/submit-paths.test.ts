/**
 * Submissions in the usual form are answered by the fast path (api/http/submit-fast-path.ts), the
 * rest by the Express route. Both must answer alike: same statuses, error bodies and headers, one
 * rate-limit budget.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { connect } from 'node:net';
import { once } from 'node:events';
import { takesRequest } from '../../api/http/submit-fast-path.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

const FAST = '/v1/jobs';
const EXPRESS = '/v1/jobs/'; // a trailing slash: not the fast path's form, the same Express route

const spec = (name: string) => ({ name, workflow: { task: { name: 'addition' } } });

test('the fast path takes exactly POST /v1/jobs with an uncompressed UTF-8 JSON body', () => {
  const req = (url: string, headers: Record<string, string>, method = 'POST') => ({ method, url, headers });
  const json = { 'content-type': 'application/json' };
  assert.equal(takesRequest(req(FAST, json)), true);
  assert.equal(takesRequest(req(FAST, { 'content-type': 'Application/JSON; charset="UTF-8"' })), true);
  assert.equal(takesRequest(req(FAST, { ...json, 'content-encoding': 'identity' })), true);
  assert.equal(takesRequest(req(EXPRESS, json)), false);
  assert.equal(takesRequest(req(`${FAST}?x=1`, json)), false);
  assert.equal(takesRequest(req(FAST, json, 'GET')), false);
  assert.equal(takesRequest(req(FAST, {})), false);
  assert.equal(takesRequest(req(FAST, { 'content-type': 'text/plain' })), false);
  assert.equal(takesRequest(req(FAST, { 'content-type': 'application/json; charset=utf-16' })), false);
  assert.equal(takesRequest(req(FAST, { ...json, 'content-encoding': 'gzip' })), false);
});

describe('both paths answer alike', () => {
  let h: Harness;
  let t: TestTenant;
  before(async () => {
    h = await startHarness({ TIMESHARE_BODY_LIMIT: '16kb' });
    t = await h.createTenant('two-paths');
  });
  after(() => h.close());

  const varying = ['id', 'name', 'spec', 'createdAt', 'updatedAt'];
  const stable = (body: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(body).filter(([k]) => !varying.includes(k)));

  test('a valid submission: 201 with the same headers and job object', async () => {
    const a = await t.as(h.http.post(FAST)).send(spec('fast')).expect(201);
    const b = await t.as(h.http.post(EXPRESS)).send(spec('express')).expect(201);
    for (const res of [a, b]) {
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text));
      assert.match(res.headers['x-request-id'] ?? '', /^[\w.-]+$/);
    }
    assert.deepEqual(stable(a.body), stable(b.body));
    assert.equal(a.body.spec.name, 'fast');
    assert.equal(b.body.spec.name, 'express');
    const given = await t.as(h.http.post(FAST)).set('X-Request-Id', 'trace-42').send(spec('traced'));
    assert.equal(given.headers['x-request-id'], 'trace-42');
  });

  const failures: [string, (path: string) => Promise<{ status: number; body: unknown }>][] = [
    ['no credentials → 401', (p) => h.http.post(p).send(spec('x'))],
    ['an invalid token → 401', (p) => h.http.post(p).set('Authorization', 'Bearer nope').send(spec('x'))],
    ['admin credentials → 403', (p) => h.admin(h.http.post(p)).send(spec('x'))],
    [
      'malformed JSON → 400',
      (p) => t.as(h.http.post(p)).set('Content-Type', 'application/json').send('{"name": '),
    ],
    ['a wrong field → 400 naming it', (p) => t.as(h.http.post(p)).send({ ...spec('x'), devices: 2 })],
    ['not an object → 400', (p) => t.as(h.http.post(p)).send([1, 2])],
    ['a form body instead of JSON → 400', (p) => t.as(h.http.post(p)).type('form').send('name=x')],
    [
      'a body over the limit → 413',
      (p) => t.as(h.http.post(p)).send({ ...spec('x'), pad: 'x'.repeat(20_000) }),
    ],
    [
      'a bad Idempotency-Key → 400',
      (p) => t.as(h.http.post(p)).set('Idempotency-Key', 'k'.repeat(300)).send(spec('x')),
    ],
  ];
  for (const [label, send] of failures) {
    test(label, async () => {
      const [a, b] = [await send(FAST), await send(EXPRESS)];
      assert.ok(a.status >= 400, `status ${a.status}`);
      assert.deepEqual([a.status, a.body], [b.status, b.body]);
    });
  }

  test('a client that leaves mid-body gets nothing admitted; the server goes on answering', async () => {
    // The part sent is a whole job spec, but Content-Length promises more: it must not be admitted.
    const part = JSON.stringify(spec('cut-short'));
    const { port } = new URL(h.api.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST ${FAST} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${part.length + 100}\r\n\r\n${part}`,
    );
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await t.as(h.http.post(FAST)).send(spec('after-cut')).expect(201);
    const cut = await h.api.deps.db.pool.query(`SELECT 1 FROM jobs WHERE name = 'cut-short'`);
    assert.equal(cut.rowCount, 0);
  });

  test('no job was written by any of the failures', async () => {
    const r = await h.api.deps.db.pool.query('SELECT name FROM jobs ORDER BY name');
    assert.deepEqual(
      r.rows.map((x) => x.name),
      ['after-cut', 'express', 'fast', 'traced'],
    );
  });

  test('forms the fast path leaves to Express are still submissions: a gzip body is admitted', async () => {
    // fetch, not supertest: supertest would serialise a Buffer body as JSON.
    const res = await fetch(`${h.api.url}${FAST}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: gzipSync(JSON.stringify(spec('zipped'))),
    });
    assert.equal(res.status, 201);
    assert.equal(((await res.json()) as { spec: { name: string } }).spec.name, 'zipped');
  });
});

test('both paths draw on one rate-limit budget', async () => {
  const h = await startHarness({ TIMESHARE_RATE_LIMIT_PER_SECOND: '1' });
  try {
    const t = await h.createTenant('limited');
    // A rate of 1/s allows a burst of 2: one on each path, then the third is refused on either.
    await t.as(h.http.post(FAST)).send(spec('one')).expect(201);
    await t.as(h.http.post(EXPRESS)).send(spec('two')).expect(201);
    for (const path of [FAST, EXPRESS]) {
      const res = await t.as(h.http.post(path)).send(spec('three')).expect(429);
      assert.equal(res.body.error.code, 'rate_limited');
      assert.equal(res.headers['retry-after'], '1');
    }
  } finally {
    await h.close();
  }
});
