/**
 * A cached token that has not expired but that the API refuses (it was signed by an API that has
 * since restarted with another secret): the CLI renews it from the stored key once, sends the
 * request again, and keeps the new token.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { issueToken } from '../../api/auth/jwt.js';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('refused', { tenant: 'restarted' });

const credentialsFile = () => path.join(cli.home, 'config', 'timeshare', 'credentials.json');
const readCredentials = async () => JSON.parse(await readFile(credentialsFile(), 'utf8'));

/** A login's credentials whose token an API with another signing secret issued, valid for an hour. */
async function credentialsFromBeforeARestart(apiKey: string): Promise<string> {
  const { kid } = jwt.decode(cli.t.token) as { kid: string };
  const old = issueToken(randomBytes(32).toString('hex'), 3600, {
    role: 'tenant',
    sub: cli.t.id,
    keyId: kid,
  });
  await cli.h.http.get('/v1/usage').set('Authorization', `Bearer ${old.token}`).expect(401);
  await mkdir(path.dirname(credentialsFile()), { recursive: true });
  await writeFile(
    credentialsFile(),
    JSON.stringify({
      apiUrl: cli.h.api.url,
      apiKey,
      token: old.token,
      expiresAt: old.expiresAt.toISOString(),
    }),
    { mode: 0o600 },
  );
  return old.token;
}

test('a refused token is renewed from the stored key, the request sent again, the new token saved', async () => {
  const refused = await credentialsFromBeforeARestart(cli.t.apiKey);
  const r = await runCli(['--json', 'usage'], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(JSON.parse(r.stdout).quota);
  const saved = await readCredentials();
  assert.notEqual(saved.token, refused);
  await cli.h.http.get('/v1/usage').set('Authorization', `Bearer ${saved.token}`).expect(200);
});

test('a request with a body (a job submission) is sent again whole', async () => {
  await credentialsFromBeforeARestart(cli.t.apiKey);
  const spec = path.join(cli.home, 'job.json');
  await writeFile(spec, JSON.stringify({ name: 'after-restart', workflow: { task: { name: 'addition' } } }));
  const r = await runCli(['--json', 'submit', spec], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).name, 'after-restart');
  const jobs = await cli.t.as(cli.h.http.get('/v1/jobs')).expect(200);
  assert.deepEqual(
    jobs.body.data.map((j: { name: string }) => j.name),
    ['after-restart'],
  );
});

test('a key the API refuses too: its refusal, once, and the file keeps what it had', async () => {
  const created = await cli.h.admin(cli.h.http.post(`/v1/tenants/${cli.t.id}/keys`)).expect(201);
  await cli.h.admin(cli.h.http.delete(`/v1/tenants/${cli.t.id}/keys/${created.body.id}`)).expect(204);
  const refused = await credentialsFromBeforeARestart(created.body.apiKey);
  const r = await runCli(['usage'], cli.env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: unauthorized: [^\n]*\n$/);
  assert.equal((await readCredentials()).token, refused);
});
