import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { documentPath, renderDocument, renderTypes, typesPath } from '../../sdk/scripts/render.js';

// CI runs this: a route or schema change without `npm run sdk:generate` fails here, not in a user's build.
test('the committed OpenAPI document is what the route registrations produce', () => {
  assert.equal(
    readFileSync(documentPath, 'utf8'),
    renderDocument(),
    'sdk/openapi.json is stale: run `npm run sdk:generate` and commit the result',
  );
});

test("the committed SDK types are openapi-typescript's output for that document", async () => {
  const committed = readFileSync(typesPath, 'utf8');
  assert.equal(
    committed,
    await renderTypes(readFileSync(documentPath, 'utf8')),
    'sdk/src/generated/schema.ts is stale: run `npm run sdk:generate` and commit the result',
  );
});
