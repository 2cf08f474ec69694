import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTimeshareClient, TimeshareError, unwrap } from '../../sdk/src/index.js';
import { buildOpenApiDocument } from '../../api/openapi-document.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('the server serves exactly the document built offline', async () => {
  const served = await h.http.get('/v1/openapi.json').expect(200);
  assert.deepEqual(served.body, JSON.parse(JSON.stringify(buildOpenApiDocument())));
});

test('the SDK drives the API end to end with typed calls and typed errors', async () => {
  const admin = createTimeshareClient({ baseUrl: h.api.url, token: h.adminKey });
  const tenant = await unwrap(admin.POST('/v1/tenants', { body: { name: 'sdk-tenant' } }));
  assert.equal(tenant.name, 'sdk-tenant');

  const anonymous = createTimeshareClient({ baseUrl: h.api.url });
  const token = await unwrap(anonymous.POST('/v1/auth/token', { body: { apiKey: tenant.apiKey } }));
  let asked = 0;
  const client = createTimeshareClient({
    baseUrl: h.api.url,
    token: () => {
      asked++;
      return token.token;
    },
  });
  const job = await unwrap(
    client.POST('/v1/jobs', { body: { name: 'sdk-run', workflow: { task: { name: 'addition' } } } }),
  );
  assert.equal(job.status, 'queued');
  const got = await unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id: job.id } } }));
  assert.equal(got.id, job.id);
  assert.equal(got.queuePosition, null, 'no scheduling round has run in this harness');
  const list = await unwrap(client.GET('/v1/jobs', { params: { query: { limit: 5 } } }));
  assert.deepEqual(
    list.data.map((j) => j.id),
    [job.id],
  );
  assert.equal(asked, 3, 'the token function is asked before every request');

  const bad = client.POST('/v1/jobs', {
    body: { name: 'bad', workflow: { task: { name: 'nope' } } } as never,
  });
  await assert.rejects(unwrap(bad), (err: unknown) => {
    assert.ok(err instanceof TimeshareError);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'invalid_request');
    assert.match(err.param ?? '', /workflow\.task\.name/);
    return true;
  });
  await assert.rejects(unwrap(anonymous.GET('/v1/usage')), { status: 401, code: 'unauthorized' });
});
