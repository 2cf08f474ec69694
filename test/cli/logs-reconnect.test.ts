/**
 * `timeshare logs -f` against a real HTTP server that speaks the events route's SSE and drops the
 * connection mid-stream: the CLI reconnects with `Last-Event-ID` and prints every event once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from './run-cli.js';

const jobId = '11111111-1111-4111-8111-111111111111';
const event = (id: number, status: string) =>
  `id: ${id}\nevent: job.${status}\ndata: ${JSON.stringify({
    id: String(id),
    type: `job.${status}`,
    data: { status },
    createdAt: new Date(0).toISOString(),
  })}\n\n`;

let server: Server;
let home: string;
const lastEventIds: (string | undefined)[] = [];
before(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'timeshare-cli-logs-'));
  server = createServer((req, res) => {
    if (req.url === '/v1/auth/token') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          token: 't',
          tokenType: 'Bearer',
          expiresAt: new Date(Date.now() + 6e5),
          role: 'tenant',
        }),
      );
    }
    assert.equal(req.url, `/v1/jobs/${jobId}/events`);
    assert.equal(req.headers.accept, 'text/event-stream');
    const last = req.headers['last-event-id'] as string | undefined;
    lastEventIds.push(last);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (last === undefined) {
      // Two events, then the connection dies without the final one.
      res.write(event(1, 'queued') + event(2, 'running'));
      setTimeout(() => res.destroy(), 50);
    } else {
      res.end(event(Number(last) + 1, 'succeeded'));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
after(async () => {
  await new Promise((r) => server.close(r));
  await rm(home, { recursive: true, force: true });
});

test('logs -f reconnects after a dropped stream with Last-Event-ID and ends at the final event', async () => {
  const env = {
    XDG_CONFIG_HOME: home,
    TIMESHARE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    TIMESHARE_API_KEY: 'tsk_test',
  };
  const r = await runCli(['--json', 'logs', '-f', jobId], env, { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const printed = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    printed.map((e) => e.id),
    ['1', '2', '3'],
  );
  assert.deepEqual(lastEventIds, [undefined, '2']);
});
