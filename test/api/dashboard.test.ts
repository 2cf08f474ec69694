/**
 * How the API serves the dashboard's files (api/http/dashboard.ts): a redirect to /ui/, the page
 * for every client route, hashed assets cached for good, a missing asset as a plain 404, the
 * same-origin content policy, and a 503 that says how to build when there is no build.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { dashboard } from '../../api/http/dashboard.js';

let dir: string;
before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'timeshare-ui-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(path.join(dir, 'assets', 'app-ABC.js'), 'console.log(1)');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const appWith = (d: string | null) => express().use(dashboard(d));

test('the page answers every client route; assets are immutable; the policy allows only this origin', async () => {
  const http = request(appWith(dir));
  const redirect = await http.get('/ui').expect(301);
  assert.equal(redirect.headers.location, '/ui/');
  for (const p of ['/ui/', '/ui/jobs/5f0c6a43-5b9e-4a53-9c4f-3d5cbbd5e7a1', '/ui/pools/default']) {
    const page = await http.get(p).expect(200);
    assert.match(page.text, /<title>t<\/title>/);
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(page.headers['content-security-policy']!, /default-src 'self'/);
  }
  const asset = await http.get('/ui/assets/app-ABC.js').expect(200);
  assert.match(asset.headers['cache-control']!, /immutable/);
  const missing = await http.get('/ui/assets/app-OLD.js').expect(404);
  assert.equal(missing.text, 'no such asset\n');
});

test('without a build, /ui says how to make one', async () => {
  const res = await request(appWith(null)).get('/ui/').expect(503);
  assert.match(res.text, /npm run ui:build/);
});
