/** `timeshare admin keys list|revoke` against an API server: find a leaked key by its prefix, revoke it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCliFixture } from './cli-fixture.js';
import { runCli } from './run-cli.js';

const cli = useCliFixture('tenant-keys', {
  tenant: 'cli-keys',
  env: ({ h }) => ({ TIMESHARE_API_URL: h.api.url, TIMESHARE_ADMIN_KEY: h.adminKey }),
});

const rowOf = (stdout: string, keyId: string) =>
  stdout
    .split('\n')
    .find((l) => l.includes(keyId))
    ?.split('│')
    .map((c) => c.trim());

test('admin keys list: the table finds a leaked key by its prefix; revoke it by that id', async () => {
  const made: { id: string; prefix: string; apiKey: string }[] = [];
  for (let i = 0; i < 2; i++) {
    const r = await runCli(['--json', 'admin', 'keys', 'create', 'cli-keys'], cli.env);
    assert.equal(r.code, 0, r.stderr);
    made.push(JSON.parse(r.stdout));
  }
  const other = await cli.h.createTenant('cli-other');

  // The leaked key is known by its prefix only: the list gives its id.
  const listed = await runCli(['admin', 'keys', 'list', 'cli-keys'], cli.env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout.split('\n')[1]!, /id.*name.*prefix.*created.*last used.*revoked/);
  const leaked = listed.stdout.split('\n').find((l) => l.includes(made[1]!.prefix));
  assert.ok(leaked, listed.stdout);
  const leakedId = leaked.split('│').map((c) => c.trim())[1]!;
  assert.equal(leakedId, made[1]!.id);
  assert.ok(!listed.stdout.includes(made[1]!.apiKey), 'no secret');
  assert.ok(!listed.stdout.includes(other.id));
  assert.doesNotMatch(listed.stdout, /^more:/m);

  const revoked = await runCli(['admin', 'keys', 'revoke', 'cli-keys', leakedId], cli.env);
  assert.equal(revoked.code, 0, revoked.stderr);
  await cli.h.http.post('/v1/auth/token').send({ apiKey: made[1]!.apiKey }).expect(401);

  // By id as well as by name; --json is the API's page.
  const json = await runCli(['--json', 'admin', 'keys', 'list', cli.t.id], cli.env);
  assert.equal(json.code, 0, json.stderr);
  const page = JSON.parse(json.stdout) as {
    data: {
      id: string;
      name: string | null;
      prefix: string;
      lastUsedAt: string | null;
      revokedAt: string | null;
    }[];
    nextCursor: string | null;
  };
  assert.equal(page.nextCursor, null);
  assert.deepEqual(
    page.data.map((k) => k.id).slice(1),
    made.map((k) => k.id),
  );
  assert.deepEqual(
    page.data.map((k) => k.revokedAt !== null),
    [false, false, true],
  );
  assert.ok(!json.stdout.includes(cli.t.apiKey) && !json.stdout.includes(made[0]!.apiKey), 'no secret');

  const after = await runCli(['admin', 'keys', 'list', 'cli-keys'], cli.env);
  const row = rowOf(after.stdout, made[1]!.id)!;
  assert.equal(row[3], made[1]!.prefix);
  assert.match(row[6]!, /^\d{4}-\d\d-\d\dT/, 'revoked at');
  assert.equal(rowOf(after.stdout, made[0]!.id)![6], '-', 'not revoked');
});

test('admin keys list: a page at a time with the "more: --after" hint', async () => {
  const all = JSON.parse((await runCli(['--json', 'admin', 'keys', 'list', 'cli-keys'], cli.env)).stdout)
    .data as { id: string }[];
  assert.ok(all.length >= 3);
  const seen: string[] = [];
  let after: string[] = [];
  for (let pages = 0; ; pages++) {
    assert.ok(pages < all.length, 'pages end');
    const r = await runCli(['admin', 'keys', 'list', 'cli-keys', '--limit', '1', ...after], cli.env);
    assert.equal(r.code, 0, r.stderr);
    for (const k of all) if (rowOf(r.stdout, k.id)) seen.push(k.id);
    const more = /^more: --after (\S+)$/m.exec(r.stdout);
    if (!more) break;
    after = ['--after', more[1]!];
  }
  assert.deepEqual(
    seen,
    all.map((k) => k.id),
  );
});

test('admin keys list: an unknown tenant is not_found; revoke --help points at list', async () => {
  const byName = await runCli(['admin', 'keys', 'list', 'no-such-tenant'], cli.env);
  assert.equal(byName.code, 1);
  assert.match(byName.stderr, /^error: not_found: no tenant named no-such-tenant$/m);
  const byId = await runCli(['admin', 'keys', 'list', '00000000-0000-4000-8000-000000000000'], cli.env);
  assert.equal(byId.code, 1);
  assert.match(byId.stderr, /^error: not_found: tenant not found$/m);

  const help = await runCli(['admin', 'keys', 'revoke', '--help'], cli.env);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout.replace(/\s+/g, ' '), /timeshare admin keys list <tenant>/);
});

test('a tenant named past the first page of tenants is found by its name', async () => {
  for (let i = 0; i < 21; i++) await cli.h.createTenant(`cli-crowd-${i}`);
  const last = await runCli(['--json', 'admin', 'keys', 'list', 'cli-crowd-20'], cli.env);
  assert.equal(last.code, 0, last.stderr);
  assert.equal(JSON.parse(last.stdout).data.length, 1, 'its one key');
});
