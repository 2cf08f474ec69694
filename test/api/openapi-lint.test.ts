/**
 * The served OpenAPI document passes Redocly's strict ruleset (redocly.yaml, offline), and keeps the
 * project's own rules: every operation has an operationId, one tag and a description, and every
 * error response is the one Error schema.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { lintFromString, loadConfig } from '@redocly/openapi-core';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { DocumentOracle, type ApiDocument } from '../helpers/openapi-doc.js';

let h: Harness;
let doc: ApiDocument;
before(async () => {
  h = await startHarness();
  doc = (await h.http.get('/v1/openapi.json').expect(200)).body;
});
after(() => h.close());

test('the document passes the Redocly lint configured in redocly.yaml', async () => {
  const config = await loadConfig({
    configPath: fileURLToPath(new URL('../../redocly.yaml', import.meta.url)),
  });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
  assert.deepEqual(
    problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    [],
  );
});

test('every operation has an operationId, one tag, a description, and errors in the Error schema', () => {
  const oracle = new DocumentOracle(doc);
  assert.ok(oracle.operations.length >= 30);
  const ids = new Set<string>();
  for (const { method, path, op } of oracle.operations) {
    const where = `${method.toUpperCase()} ${path}`;
    assert.ok(op.operationId && !ids.has(op.operationId), `${where}: unique operationId`);
    ids.add(op.operationId);
    assert.equal(op.tags?.length, 1, `${where}: one tag`);
    assert.ok(op.description && op.description.length > 10, `${where}: description`);
    for (const [status, response] of Object.entries(op.responses)) {
      if (Number(status) < 400) continue;
      assert.deepEqual(
        response.content?.['application/json']?.schema,
        { $ref: '#/components/schemas/Error' },
        `${where} ${status}: the Error schema`,
      );
    }
  }
});
