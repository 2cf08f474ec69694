/** `timeshare admin nodes key|revoke-key` against an API server (no scheduler or worker needed). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('node-keys', {
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});

test('admin nodes revoke-key: the key mints no more tokens; again is fine; an unknown id is not_found', async () => {
  const created = await runCli(['--json', 'admin', 'nodes', 'key', 'cli-node'], cli.env);
  assert.equal(created.code, 0, created.stderr);
  const key = JSON.parse(created.stdout) as { id: string; apiKey: string };
  await cli.h.http.post('/v1/auth/token').send({ apiKey: key.apiKey }).expect(200);

  const revoked = await runCli(['admin', 'nodes', 'revoke-key', key.id], cli.env);
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, new RegExp(`revoked node key ${key.id}`));
  await cli.h.http.post('/v1/auth/token').send({ apiKey: key.apiKey }).expect(401);
  assert.equal((await runCli(['admin', 'nodes', 'revoke-key', key.id], cli.env)).code, 0);

  const unknown = await runCli(
    ['admin', 'nodes', 'revoke-key', '00000000-0000-4000-8000-000000000000'],
    cli.env,
  );
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^error: not_found: node key not found$/m);
});

test('admin nodes keys: a table of ids to revoke, a page at a time; --json is the API page', async () => {
  const made: { id: string; apiKey: string }[] = [];
  for (const name of ['rack-a', 'rack-b', 'rack-c']) {
    const r = await runCli(['--json', 'admin', 'nodes', 'key', name], cli.env);
    assert.equal(r.code, 0, r.stderr);
    made.push(JSON.parse(r.stdout));
  }
  assert.equal((await runCli(['admin', 'nodes', 'revoke-key', made[1]!.id], cli.env)).code, 0);

  // Every key this file made, oldest first (the first test's too), two at a time.
  const all = JSON.parse(
    (await runCli(['--json', 'admin', 'nodes', 'keys', '--limit', '100'], cli.env)).stdout,
  );
  assert.equal(all.nextCursor, null);
  const ours = all.data.slice(-3);
  assert.deepEqual(
    ours.map((k: { id: string; name: string }) => [k.id, k.name]),
    made.map((k, i) => [k.id, `rack-${'abc'[i]}`]),
  );
  assert.deepEqual(
    ours.map((k: { revokedAt: string | null }) => k.revokedAt !== null),
    [false, true, false],
  );
  assert.ok(!JSON.stringify(all).includes(made[0]!.apiKey), 'no secret');

  const rowOf = (stdout: string, keyId: string) =>
    stdout
      .split('\n')
      .find((l) => l.includes(keyId))
      ?.split('│')
      .map((c) => c.trim());
  const seen: string[] = [];
  let after: string[] = [];
  for (let pages = 0; ; pages++) {
    assert.ok(pages < all.data.length, 'pages end');
    const r = await runCli(['admin', 'nodes', 'keys', '--limit', '2', ...after], cli.env);
    assert.equal(r.code, 0, r.stderr);
    for (const k of all.data) if (rowOf(r.stdout, k.id)) seen.push(k.id);
    const more = /^more: --after (\S+)$/m.exec(r.stdout);
    if (!more) break;
    after = ['--after', more[1]!];
  }
  assert.deepEqual(
    seen,
    all.data.map((k: { id: string }) => k.id),
  );

  const last = await runCli(['admin', 'nodes', 'keys', '--limit', '100'], cli.env);
  const revoked = rowOf(last.stdout, made[1]!.id)!;
  assert.deepEqual(revoked.slice(1, 3), [made[1]!.id, 'rack-b']);
  assert.match(revoked[6]!, /^\d{4}-\d\d-\d\dT/, 'revoked at');
  assert.equal(rowOf(last.stdout, made[0]!.id)![6], '-', 'not revoked');
});
