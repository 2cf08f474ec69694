/**
 * A cached token that has not expired but that the API refuses (it was signed by an API that has
 * since restarted with another secret): the CLI renews it from the stored key once, sends the
 * request again, and keeps the new token.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { issueToken } from '../../api/auth/jwt.js';
import { startHarness, type Harness, type TestTenant } from '../helpers/api-harness.js';
import { runCli } from './run-cli.js';

let h: Harness;
let t: TestTenant;
let home: string;
let env: Record<string, string>;
before(async () => {
  h = await startHarness();
  t = await h.createTenant('restarted');
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-refused-'));
  env = { XDG_CONFIG_HOME: path.join(home, 'config') };
});
after(async () => {
  await h.close();
  await rm(home, { recursive: true, force: true });
});

const credentialsFile = () => path.join(home, 'config', 'timeshare', 'credentials.json');
const readCredentials = async () => JSON.parse(await readFile(credentialsFile(), 'utf8'));

/** A login's credentials whose token an API with another signing secret issued, valid for an hour. */
async function credentialsFromBeforeARestart(apiKey: string): Promise<string> {
  const { kid } = jwt.decode(t.token) as { kid: string };
  const old = issueToken(randomBytes(32).toString('hex'), 3600, { role: 'tenant', sub: t.id, keyId: kid });
  await h.http.get('/v1/usage').set('Authorization', `Bearer ${old.token}`).expect(401);
  await mkdir(path.dirname(credentialsFile()), { recursive: true });
  await writeFile(
    credentialsFile(),
    JSON.stringify({ apiUrl: h.api.url, apiKey, token: old.token, expiresAt: old.expiresAt.toISOString() }),
    { mode: 0o600 },
  );
  return old.token;
}

test('a refused token is renewed from the stored key, the request sent again, the new token saved', async () => {
  const refused = await credentialsFromBeforeARestart(t.apiKey);
  const r = await runCli(['--json', 'usage'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).quota);
  const saved = await readCredentials();
  assert.notEqual(saved.token, refused);
  await h.http.get('/v1/usage').set('Authorization', `Bearer ${saved.token}`).expect(200);
});

test('a request with a body (a job submission) is sent again whole', async () => {
  await credentialsFromBeforeARestart(t.apiKey);
  const spec = path.join(home, 'job.json');
  await writeFile(spec, JSON.stringify({ name: 'after-restart', workflow: { task: { name: 'addition' } } }));
  const r = await runCli(['--json', 'submit', spec], env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).name, 'after-restart');
  const jobs = await t.as(h.http.get('/v1/jobs')).expect(200);
  assert.deepEqual(
    jobs.body.data.map((j: { name: string }) => j.name),
    ['after-restart'],
  );
});

test('a key the API refuses too: its refusal, once, and the file keeps what it had', async () => {
  const created = await h.admin(h.http.post(`/v1/tenants/${t.id}/keys`)).expect(201);
  await h.admin(h.http.delete(`/v1/tenants/${t.id}/keys/${created.body.id}`)).expect(204);
  const refused = await credentialsFromBeforeARestart(created.body.apiKey);
  const r = await runCli(['usage'], env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: unauthorized: [^\n]*\n$/);
  assert.equal((await readCredentials()).token, refused);
});
