/**
 * DNS rebinding: a tenant's DNS server answers a public address to the dispatcher's check and
 * 127.0.0.1 to the connection a moment later. The dispatcher (in process, against real
 * PostgreSQL) must connect only to addresses it vetted, so no request reaches the local server
 * and the delivery fails saying why. The resolver is the dispatcher's own option, answering as
 * each test says; nothing here is sent anywhere but 127.0.0.1. And the other way round: the
 * address the lookup vetted is the one connected to, with the URL's host kept as Host header and
 * as the TLS server name.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import pg from 'pg';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { createLogger } from '../../common/logger.js';
import { Dispatcher, type DispatchOptions } from '../../webhooks/dispatch.js';
import { newSecret } from '../../webhooks/signing.js';
import type { Resolve } from '../../webhooks/url-policy.js';

let h: Harness;
let pool: pg.Pool;
let server: Server;
let port: number;
const requests: { url: string; headers: IncomingHttpHeaders }[] = [];
const logger = createLogger('webhooks', 'silent');

before(async () => {
  h = await startHarness();
  pool = new pg.Pool({ connectionString: h.db.url, max: 4 });
  server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await pool.end();
  await h.close();
});

/** A resolver that answers `answers[i]` to its i-th call (the last one ever after), and counts them. */
function changing(...answers: string[][]): Resolve & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<LookupAddress[]> => {
    const answer = answers[Math.min(calls.length, answers.length - 1)]!;
    calls.push(host);
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

const options = (over: Partial<DispatchOptions>): DispatchOptions => ({
  concurrency: 4,
  timeoutMs: 5_000,
  retryBaseMs: 60_000,
  retryMaxMs: 60_000,
  allowPrivate: false,
  ...over,
});

/** An endpoint at `url` with one delivery due, whose deadline the first failure passes. */
async function oneDelivery(url: string): Promise<string> {
  const t = await h.createTenant();
  const e = await pool.query(
    'INSERT INTO webhook_endpoints (tenant_id, url, secret) VALUES ($1, $2, $3) RETURNING id',
    [t.id, url, newSecret()],
  );
  const d = await pool.query(
    `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, deadline, next_attempt_at)
     VALUES ($1, 1, 'job.queued', '{"type": "job.queued", "data": {}}', now() + interval '1 second', now())
     RETURNING id`,
    [e.rows[0].id],
  );
  return d.rows[0].id;
}

async function deliverOnce(opts: DispatchOptions): Promise<void> {
  const d = new Dispatcher(pool, opts, logger);
  await d.pump();
  await d.idle();
  await d.close(0);
}

const row = async (id: string) =>
  (
    await pool.query(
      'SELECT status, attempts, last_status_code AS "code", last_error AS "error" FROM webhook_deliveries WHERE id = $1',
      [id],
    )
  ).rows[0] as { status: string; attempts: number; code: number | null; error: string | null };

test('a name that answers public to the check and 127.0.0.1 to the connection reaches nothing', async () => {
  // "localhost" is 127.0.0.1 to the system resolver too: what a connection that resolved the name
  // on its own, as fetch did, would have reached.
  const id = await oneDelivery(`http://localhost:${port}/rebound`);
  const resolve = changing(['93.184.216.34'], ['127.0.0.1']);
  await deliverOnce(options({ resolve }));
  assert.deepEqual(
    requests.filter((r) => r.url === '/rebound'),
    [],
    'no request reached the local server',
  );
  assert.deepEqual(await row(id), {
    status: 'failed',
    attempts: 1,
    code: null,
    error: 'localhost resolves to 127.0.0.1, a private or loopback address',
  });
  assert.deepEqual(resolve.calls, ['localhost', 'localhost'], 'the check, then the connection');
});

test('an answer with a private address among public ones is refused at the connection too', async () => {
  const id = await oneDelivery(`http://localhost:${port}/mixed`);
  await deliverOnce(options({ resolve: changing(['93.184.216.34'], ['93.184.216.34', '127.0.0.1']) }));
  assert.equal(requests.filter((r) => r.url === '/mixed').length, 0);
  assert.match((await row(id)).error ?? '', /resolves to 127\.0\.0\.1, a private or loopback address/);
});

test('the address the lookup gave is the one connected to; the Host header stays the name', async () => {
  // .invalid never resolves (RFC 6761): only the dispatcher's resolver can have sent it here.
  const id = await oneDelivery(`http://hooks.example.invalid:${port}/vetted`);
  const resolve = changing(['127.0.0.1']);
  await deliverOnce(options({ allowPrivate: true, resolve }));
  const got = requests.filter((r) => r.url === '/vetted');
  assert.equal(got.length, 1);
  assert.equal(got[0]!.headers.host, `hooks.example.invalid:${port}`);
  assert.match(String(got[0]!.headers['webhook-id']), /^msg_/);
  assert.deepEqual(await row(id), { status: 'succeeded', attempts: 1, code: 204, error: null });
  assert.deepEqual(resolve.calls, ['hooks.example.invalid'], 'resolved once, by the connection');
});

test('over HTTPS the TLS server name is the URL host, not the address connected to', async () => {
  // A TLS server that only listens for the ClientHello's server name, then ends the handshake.
  const names: (string | null)[] = [];
  const tls = createTlsServer({
    SNICallback: (name, cb) => {
      names.push(name);
      cb(new Error('no certificate here'));
    },
  });
  tls.on('tlsClientError', () => undefined);
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  try {
    const tlsPort = (tls.address() as AddressInfo).port;
    const id = await oneDelivery(`https://hooks.example.invalid:${tlsPort}/tls`);
    await deliverOnce(options({ allowPrivate: true, resolve: changing(['127.0.0.1']) }));
    assert.deepEqual(names, ['hooks.example.invalid']);
    const r = await row(id);
    assert.equal(r.status, 'failed');
    assert.ok(r.error, 'the failed handshake is recorded');
  } finally {
    await new Promise((r) => tls.close(r));
  }
});

test('a redirect is not followed: the 3xx is the answer, retried', async () => {
  const redirect = createServer((req, res) => {
    requests.push({ url: `redirect:${req.url}`, headers: req.headers });
    res.writeHead(307, { location: `http://127.0.0.1:${port}/redirected` }).end();
  });
  await new Promise<void>((r) => redirect.listen(0, '127.0.0.1', r));
  try {
    const id = await oneDelivery(`http://127.0.0.1:${(redirect.address() as AddressInfo).port}/moved`);
    await deliverOnce(options({ allowPrivate: true }));
    assert.equal(requests.filter((r) => r.url === '/redirected').length, 0, 'not followed');
    assert.equal(requests.filter((r) => r.url === 'redirect:/moved').length, 1);
    assert.deepEqual(await row(id), { status: 'failed', attempts: 1, code: 307, error: 'HTTP 307' });
  } finally {
    redirect.closeAllConnections();
    await new Promise((r) => redirect.close(r));
  }
});
