import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
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

/** A port that was just free: nothing listens there, so a connection is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

test('an API nobody answers for is a TimeshareError unreachable, after the retries, with its cause', async () => {
  let sent = 0;
  const client = createTimeshareClient({
    baseUrl: `http://127.0.0.1:${await closedPort()}`,
    token: 't',
    fetch: (input, init) => {
      sent++;
      return fetch(input, init);
    },
    retry: { sleep: async () => undefined },
  });
  await assert.rejects(unwrap(client.GET('/v1/jobs')), (err: unknown) => {
    assert.ok(err instanceof TimeshareError, String(err));
    assert.equal(err.code, 'unreachable');
    assert.equal(err.status, 0, 'no answer, so no HTTP status');
    assert.equal(err.type, 'api_connection_error');
    assert.match(err.message, /GET http:\/\/127\.0\.0\.1:\d+\/v1\/jobs.*ECONNREFUSED/);
    assert.ok(err.cause instanceof TypeError);
    assert.equal((err.cause.cause as { code?: string }).code, 'ECONNREFUSED');
    return true;
  });
  assert.equal(sent, 3, 'a read is tried again before giving up');

  // The caller's own abort, or its token function failing, is not the API being unreachable.
  await assert.rejects(unwrap(client.GET('/v1/jobs', { signal: AbortSignal.abort() })), {
    name: 'AbortError',
  });
  const noToken = createTimeshareClient({
    baseUrl: `http://127.0.0.1:${await closedPort()}`,
    token: () => {
      throw new TypeError('no token stored');
    },
  });
  await assert.rejects(unwrap(noToken.GET('/v1/jobs')), { name: 'TypeError', message: 'no token stored' });
  // Nor is an error of a fetch the caller wrapped (the CLI's renewal writing its credentials file).
  const wrapped = createTimeshareClient({
    baseUrl: `http://127.0.0.1:${await closedPort()}`,
    fetch: async () => {
      throw new Error('ENOSPC: no space left on device');
    },
  });
  await assert.rejects(unwrap(wrapped.GET('/v1/jobs')), { message: 'ENOSPC: no space left on device' });
});
