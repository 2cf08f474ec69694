/**
 * How the CLI reports errors, none of which needs a server: one `error: …` line on stderr (the
 * code, when there is one, then the message), the same as JSON on stdout with --json, exit code 1.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './run-cli.js';

let home: string;
let env: Record<string, string>;
before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-errors-'));
  // A key, so that commands get as far as talking to the API; no URL unless a test sets one.
  env = { XDG_CONFIG_HOME: path.join(home, 'config'), TIMESHARE_API_KEY: 'tsk_not-a-real-key' };
});
after(() => rm(home, { recursive: true, force: true }));

/** stderr's only line, which must start with one `error: ` and not a second. */
function oneErrorLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, /^error: /);
  assert.doesNotMatch(lines[0]!, /^error: error\b/);
  return lines[0]!;
}

test('an --api-url that is not a URL is one clean error naming it, before any request', async () => {
  const r = await runCli(['--api-url', 'notaurl', 'jobs', 'list'], env);
  assert.equal(r.code, 1);
  assert.match(oneErrorLine(r.stderr), /^error: invalid_api_url: the API URL "notaurl" \(from --api-url\)/);

  const j = await runCli(['--json', '--api-url', 'notaurl', 'jobs', 'list'], env);
  assert.equal(j.code, 1);
  assert.equal(JSON.parse(j.stdout).error.code, 'invalid_api_url');
  oneErrorLine(j.stderr);

  const fromEnv = await runCli(['admin', 'tenants', 'list'], {
    ...env,
    TIMESHARE_ADMIN_KEY: 'x'.repeat(20),
    TIMESHARE_API_URL: 'ftp://example.com',
  });
  assert.equal(fromEnv.code, 1);
  assert.match(oneErrorLine(fromEnv.stderr), /"ftp:\/\/example\.com" \(from TIMESHARE_API_URL\)/);

  // Nor is it saved by a login that only keeps an admin key.
  const login = await runCli(['--api-url', 'notaurl', 'login', '--admin-key', 'x'.repeat(20)], env);
  assert.equal(login.code, 1);
  oneErrorLine(login.stderr);
  await assert.rejects(stat(path.join(home, 'config', 'timeshare', 'credentials.json')));
});

test("an error that is neither the API's nor the CLI's own prints its message once, after one prefix", async () => {
  const dir = path.join(home, 'broken', 'timeshare');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'credentials.json'), '{not json');
  const r = await runCli(['jobs', 'list'], {
    XDG_CONFIG_HOME: path.join(home, 'broken'),
    TIMESHARE_API_URL: 'http://127.0.0.1:9',
  });
  assert.equal(r.code, 1);
  assert.match(oneErrorLine(r.stderr), /^error: [^:]*JSON/);
  const j = await runCli(['--json', 'jobs', 'list'], {
    XDG_CONFIG_HOME: path.join(home, 'broken'),
    TIMESHARE_API_URL: 'http://127.0.0.1:9',
  });
  assert.equal(j.code, 1);
  assert.equal(JSON.parse(j.stdout).error.code, 'error');
  oneErrorLine(j.stderr);
});
