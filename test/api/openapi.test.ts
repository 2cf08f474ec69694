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
  assert.deepEqual(
    doc.components.schemas.Error.properties.error.properties.code.enum,
    Object.keys(errorCatalogue),
  );
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
