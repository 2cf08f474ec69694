/** `timeshare admin nodes key|revoke-key` against an API server (no scheduler or worker needed). */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { runCli } from './run-cli.js';

let h: Harness;
let home: string;
let env: Record<string, string>;
before(async () => {
  h = await startHarness();
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-node-keys-'));
  env = {
    XDG_CONFIG_HOME: path.join(home, 'config'),
    TIMESHARE_API_URL: h.api.url,
    TIMESHARE_ADMIN_KEY: h.adminKey,
  };
});
after(async () => {
  await h.close();
  await rm(home, { recursive: true, force: true });
});

test('admin nodes revoke-key: the key mints no more tokens; again is fine; an unknown id is not_found', async () => {
  const created = await runCli(['--json', 'admin', 'nodes', 'key', 'cli-node'], env);
  assert.equal(created.code, 0, created.stderr);
  const key = JSON.parse(created.stdout) as { id: string; apiKey: string };
  await h.http.post('/v1/auth/token').send({ apiKey: key.apiKey }).expect(200);

  const revoked = await runCli(['admin', 'nodes', 'revoke-key', key.id], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, new RegExp(`revoked node key ${key.id}`));
  await h.http.post('/v1/auth/token').send({ apiKey: key.apiKey }).expect(401);
  assert.equal((await runCli(['admin', 'nodes', 'revoke-key', key.id], env)).code, 0);

  const unknown = await runCli(['admin', 'nodes', 'revoke-key', '00000000-0000-4000-8000-000000000000'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^error: not_found: node key not found$/m);
});
