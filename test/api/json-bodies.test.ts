/**
 * Every route that takes a body reads it as JSON and says so when it is not: a body sent as a form
 * (`curl -d` without a Content-Type), as text, or none where one is needed is refused with a 400
 * that names the Content-Type to send. Before, only `POST /v1/jobs` said so; elsewhere the route's
 * schema answered for a body it never saw ("Invalid input: expected object, received undefined",
 * `param: null`), or `PATCH /v1/jobs/{id}` as `application/merge-patch+json` blamed `priority`.
 * `application/*+json` types are JSON (api/http/json-body.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';

let h: Harness;
let acme: TestTenant;

before(async () => {
  h = await startHarness();
  acme = await h.createTenant('acme');
});
after(() => h.close());

const notJson = /send the request body as JSON with Content-Type: application\/json/;

/** Every operation the document says takes a body, with a path whose parameters are any id. */
async function bodyRoutes() {
  const doc = (await h.http.get('/v1/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
  };
  const out: { method: string; path: string; required: boolean }[] = [];
  for (const [template, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops))
      if (op.requestBody)
        out.push({
          method,
          path: template.replace(/\{[^}]+\}/g, () => randomUUID()),
          required: op.requestBody.required === true,
        });
  return out;
}

test('every route with a body refuses one that is not JSON, saying which Content-Type to send', async () => {
  const routes = await bodyRoutes();
  assert.ok(routes.length >= 10, `found ${routes.length} routes with a body`);
  for (const { method, path } of routes) {
    // The admin key gets past authentication everywhere; the body is read before the role check.
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', '{"apiKey":"tsk_x"}'], // curl -d
      ['text/plain', '{"name":"x"}'],
      [undefined, '{"name":"x"}'],
    ] as const) {
      let req = h.admin(h.http[method as 'post'](path));
      if (type) req = req.set('Content-Type', type);
      else req = req.unset('Content-Type');
      const res = await req.send(Buffer.from(body));
      assert.equal(res.status, 400, `${method} ${path} as ${type}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.match(res.body.error.message, notJson, `${method} ${path} as ${type}`);
      assert.equal(res.body.error.param, 'Content-Type');
    }
  }
});

test('a route that needs a body says so when none is sent; one whose body is optional does without', async () => {
  const routes = await bodyRoutes();
  assert.deepEqual(
    routes.filter((r) => !r.required).map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/g, '{id}')}`),
    ['post /v1/tenants/{id}/keys', 'post /v1/node-keys', 'post /v1/nodes/{id}/cordon'],
    'the document marks every other body required',
  );
  const res = await h.http.post('/v1/auth/token').expect(400);
  assert.match(
    res.body.error.message,
    /this route takes a JSON body: send one with Content-Type: application\/json/,
  );
  const tenant = await h.admin(h.http.put(`/v1/tenants/${acme.id}/quota`)).expect(400);
  assert.match(tenant.body.error.message, /this route takes a JSON body/);
  await h.admin(h.http.post('/v1/node-keys')).expect(201);
  await h.admin(h.http.post(`/v1/tenants/${acme.id}/keys`)).expect(201);
  // No body: a cordon without a reason, of a node that is not there (404, not 400).
  await h.admin(h.http.post('/v1/nodes/00000000-0000-4000-8000-000000000000/cordon')).expect(404);
});

test('application/*+json is JSON: a merge patch of a job changes its priority', async () => {
  const job = await acme
    .as(h.http.post('/v1/jobs'))
    .send({ name: 'patched', workflow: { task: { name: 'addition' } } })
    .expect(201);
  const res = await acme
    .as(h.http.patch(`/v1/jobs/${job.body.id}`))
    .set('Content-Type', 'application/merge-patch+json')
    .send('{"priority": "high"}')
    .expect(200);
  assert.equal(res.body.priority, 'high');
  const token = await h.http
    .post('/v1/auth/token')
    .set('Content-Type', 'application/vnd.timeshare+json; charset=utf-8')
    .send(JSON.stringify({ apiKey: acme.apiKey }))
    .expect(200);
  assert.equal(token.body.role, 'tenant');
});
