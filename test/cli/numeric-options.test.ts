/**
 * Numeric options: a value that is not a number (or not a whole one where the API counts) is the
 * CLI's own error naming the option, before any request; a good one reaches the API as a number.
 * The API here is an HTTP server that records what it is sent.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './run-cli.js';

const id = '11111111-1111-4111-8111-111111111111';
const requests: { method: string; url: string; body: string }[] = [];
let server: Server;
let home: string;
let env: Record<string, string>;
before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-numbers-'));
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body || '{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  env = {
    XDG_CONFIG_HOME: path.join(home, 'config'),
    TIMESHARE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    TIMESHARE_API_KEY: 'tsk_not-a-real-key',
    TIMESHARE_ADMIN_KEY: 'x'.repeat(20),
  };
});
after(async () => {
  await new Promise((r) => server.close(r));
  await rm(home, { recursive: true, force: true });
});

// Every numeric option but those of `metrics` (cli/commands/metrics.ts), with a value it refuses.
const refused: [args: string[], flags: string, value: string, says: string][] = [
  [['admin', 'tenants', 'create', 'acme'], '--weight <w>', 'abc', 'Not a number.'],
  [['admin', 'tenants', 'set', 'acme'], '--weight <w>', 'heavy', 'Not a number.'],
  [['admin', 'quota', 'set', id], '--max-active-jobs <n>', 'abc', 'Not an integer.'],
  [['admin', 'quota', 'set', id], '--max-active-jobs <n>', '12abc', 'Not an integer.'],
  [['admin', 'quota', 'set', id], '--max-concurrent-devices <n>', '2.5', 'Not an integer.'],
  [['admin', 'quota', 'set', id], '--max-devices-per-job <n>', '', 'Not an integer.'],
  [['admin', 'quota', 'set', id], '--device-hours-per-month <h>', 'lots', 'Not a number.'],
  [['admin', 'nodes', 'keys'], '--limit <n>', 'ten', 'Not an integer.'],
  [['admin', 'nodes', 'timeline', id], '--limit <n>', '2.5', 'Not an integer.'],
  [['admin', 'pools', 'timeline', 'default'], '--limit <n>', 'many', 'Not an integer.'],
  [
    ['admin', 'nodes', 'timeline', id],
    '--since <time>',
    'yesterday',
    'Not an ISO time (2024-05-01T12:00:00Z) or a duration (10m, 2h, 1d).',
  ],
  [['jobs', 'list'], '--limit <n>', 'abc', 'Not an integer.'],
  [['jobs', 'wait', id], '--interval <seconds>', 'soon', 'Not a number.'],
  [['jobs', 'wait', id], '--timeout <seconds>', ' ', 'Not a number.'],
  [['queue', 'default'], '--offset <n>', 'abc', 'Not an integer.'],
  [['queue', 'default'], '--limit <n>', '1e', 'Not an integer.'],
  [['webhooks', 'deliveries', id], '--limit <n>', 'abc', 'Not an integer.'],
];

for (const [args, flags, value, says] of refused) {
  const option = flags.split(' ')[0]!;
  test(`${args.slice(0, 2).join(' ')} ${option} ${JSON.stringify(value)}: refused before any request`, async () => {
    requests.length = 0;
    const r = await runCli([...args, option, value], env);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.split('\n')[0],
      `error: option '${flags}' argument '${value}' is invalid. ${says}`,
      r.stderr,
    );
    assert.deepEqual(requests, []);
  });
}

test('numbers that are good reach the API as numbers', async () => {
  requests.length = 0;
  const r = await runCli(
    ['--json', 'admin', 'quota', 'set', id, '--max-active-jobs', '7', '--device-hours-per-month', '2.5'],
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    requests.map((q) => [q.method, q.url, q.body && JSON.parse(q.body)]),
    [['PUT', `/v1/tenants/${id}/quota`, { maxActiveJobs: 7, deviceHoursPerMonth: 2.5 }]],
  );
});
