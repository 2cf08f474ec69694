import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { errorCatalogue } from '../../common/errors.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('GET /v1/openapi.json is OpenAPI 3.1 generated from the validating schemas', async () => {
  const res = await h.http.get('/v1/openapi.json').expect(200);
  const doc = res.body;
  assert.equal(doc.openapi, '3.1.0');
  for (const p of [
    '/v1/tenants',
    '/v1/tenants/{id}/keys',
    '/v1/tenants/{id}/keys/{keyId}',
    '/v1/tenants/{id}/quota',
    '/v1/auth/token',
    '/v1/jobs',
    '/v1/jobs/{id}',
    '/v1/jobs/{id}/cancel',
    '/v1/jobs/{id}/events',
    '/v1/jobs/{id}/events/stream',
    '/v1/jobs/{id}/metrics',
    '/v1/jobs/{id}/checkpoints',
    '/v1/jobs/{id}/checkpoints/{checkpointId}/content',
    '/v1/usage',
    '/v1/pools',
    '/v1/nodes',
    '/v1/jobs/{id}/preempt',
    '/v1/nodes/{id}/timeline',
    '/v1/nodes/register',
    '/v1/nodes/{id}/heartbeat',
    '/v1/nodes/{id}/drain',
    '/v1/nodes/{id}/assignments',
    '/v1/nodes/{id}/jobs/{jobId}/start',
    '/v1/nodes/{id}/jobs/{jobId}/report',
    '/v1/nodes/{id}/jobs/{jobId}/checkpoints',
    '/v1/nodes/{id}/jobs/{jobId}/finish',
    '/healthz',
    '/readyz',
    '/metrics',
  ]) {
    assert.ok(doc.paths[p], `documents ${p}`);
  }
  const spec = doc.components.schemas.JobSpec;
  assert.deepEqual(spec.required.sort(), ['name', 'workflow']);
  assert.equal(spec.additionalProperties, false);
  assert.deepEqual(doc.components.schemas.TaskSpec.properties.name.enum, ['addition', 'reversal', 'sorting']);
  assert.ok(doc.paths['/v1/jobs'].post.responses['429']);
  // Open, since codes may be added (docs/api.md): a client generated from an enum would refuse a new one.
  const code = doc.components.schemas.Error.properties.error.properties.code;
  assert.equal(code.type, 'string');
  assert.equal(code.enum, undefined);
  assert.deepEqual(code.examples, Object.keys(errorCatalogue));
  for (const c of Object.keys(errorCatalogue)) assert.match(code.description, new RegExp(`\`${c}\``), c);
});

test('response headers clients read are documented', async () => {
  const doc = (await h.http.get('/v1/openapi.json').expect(200)).body;
  const headersOf = (path: string, method: string, status: number) =>
    Object.keys(doc.paths[path][method].responses[String(status)].headers ?? {}).sort();
  const content = '/v1/jobs/{id}/checkpoints/{checkpointId}/content';
  assert.deepEqual(headersOf(content, 'get', 200), [
    'Accept-Ranges',
    'Content-Length',
    'ETag',
    'Repr-Digest',
    'X-Checkpoint-Sha256',
  ]);
  assert.deepEqual(headersOf(content, 'get', 206), [
    'Accept-Ranges',
    'Content-Length',
    'Content-Range',
    'ETag',
    'X-Checkpoint-Sha256',
  ]);
  assert.deepEqual(headersOf('/v1/jobs', 'post', 201), ['Idempotent-Replayed']);
  assert.deepEqual(headersOf('/v1/nodes/register', 'post', 409), ['Retry-After']);
  // Every 429 and 503 the API can send carries Retry-After, and says so.
  for (const [path, item] of Object.entries(
    doc.paths as Record<string, Record<string, { responses: object }>>,
  ))
    for (const [method, op] of Object.entries(item))
      for (const status of [429, 503])
        if (String(status) in op.responses)
          assert.deepEqual(headersOf(path, method, status), ['Retry-After'], `${method} ${path} ${status}`);
});

test('the events page declares both its media types; the live stream is its own operation; cursors are decimal strings', async () => {
  const doc = (await h.http.get('/v1/openapi.json').expect(200)).body;
  const page = doc.paths['/v1/jobs/{id}/events'].get;
  // The page answers the stream itself when asked for text/event-stream: both are declared.
  assert.deepEqual(Object.keys(page.responses['200'].content), ['application/json', 'text/event-stream']);
  assert.deepEqual(page.responses['200'].content['application/json'].schema, {
    $ref: '#/components/schemas/JobEventList',
  });
  const sse = page.responses['200'].content['text/event-stream'].schema;
  assert.equal(sse.type, 'string');
  assert.match(sse.description, /GET \/v1\/jobs\/\{id\}\/events\/stream/);
  const stream = doc.paths['/v1/jobs/{id}/events/stream'].get;
  assert.deepEqual(Object.keys(stream.responses['200'].content), ['text/event-stream']);
  const param = (op: { parameters: { name: string; in: string; schema: object }[] }, name: string) =>
    op.parameters.find((p) => p.name === name);
  for (const [op, where, name] of [
    [page, 'query', 'after'],
    [stream, 'query', 'after'],
    [stream, 'header', 'Last-Event-ID'],
  ] as const) {
    const p = param(op, name);
    assert.equal(p?.in, where, name);
    assert.equal((p?.schema as { type?: string }).type, 'string', name);
    assert.equal((p?.schema as { pattern?: string }).pattern, '^\\d+$', name);
  }
  const list = doc.components.schemas.JobEventList.properties;
  assert.deepEqual(list.nextCursor.type, ['string', 'null']);
  assert.equal(doc.components.schemas.JobEvent.properties.id.type, 'string');
});

test('every error code is documented in docs/api.md', () => {
  const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  for (const code of Object.keys(errorCatalogue)) assert.match(docs, new RegExp(`\`${code}\``), code);
});

test('health, readiness and Prometheus metrics answer without credentials', async () => {
  await h.http.get('/healthz').expect(200, { status: 'ok' });
  const ready = await h.http.get('/readyz').expect(200);
  assert.deepEqual(ready.body.checks, { postgres: 'ok', redis: 'ok' });
  await h.http.get('/v1/nope').expect(404);
  const metrics = await h.http.get('/metrics').expect(200);
  assert.match(metrics.text, /timeshare_api_http_request_duration_seconds_bucket\{.*route="unmatched"/);
  assert.match(metrics.text, /timeshare_jobs_submitted_total 0/);
});
