/**
 * The SDK's client from an API key (sdk/src/api-key.ts) against a real API, and the CLI's and the
 * worker's token renewal, which share its timing (sdk/src/token-renewal.ts).
 *
 * An SDK user who cached a token until its `expiresAt` got 118 consecutive 401s over 120 s after the
 * API restarted with another signing secret: `clientFromApiKey` exchanges the key once more on the
 * first 401 and goes on. With `TIMESHARE_JWT_TTL_SECONDS=30` (the least allowed) every client
 * renewed a minute before expiry, so before every request: one exchange now serves 20 s.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { issueToken } from '../../api/auth/jwt.js';
import { createLogger } from '../../common/logger.js';
import { startApi } from '../../api/server.js';
import { clientFromApiKey, createTimeshareClient, unwrap, type Token } from '../../sdk/src/index.js';
import { createContext } from '../../cli/context.js';
import { ControlPlaneClient } from '../../worker-node/control-plane-client.js';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { freePort } from '../helpers/processes.js';

let h: Harness;
before(async () => {
  // The shortest token lifetime allowed, and a fixed port for the restart.
  h = await startHarness({ TIMESHARE_JWT_TTL_SECONDS: '30', PORT: String(await freePort()) });
});
after(() => h.close());

/** A fetch that counts what it sends: token exchanges, and answers by status. */
function counting(inner: typeof fetch = globalThis.fetch) {
  const seen = { exchanges: 0, statuses: [] as number[] };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (new URL(request.url).pathname === '/v1/auth/token') seen.exchanges++;
    const res = await inner(request);
    seen.statuses.push(res.status);
    return res;
  };
  return { seen, fetch };
}

/** Counts the token exchanges of code that calls the global fetch (the CLI, the worker). */
async function countingGlobalFetch<T>(run: () => Promise<T>): Promise<{ exchanges: number; value: T }> {
  const original = globalThis.fetch;
  const { seen, fetch } = counting(original);
  globalThis.fetch = fetch;
  try {
    return { value: await run(), exchanges: seen.exchanges };
  } finally {
    globalThis.fetch = original;
  }
}

test('clientFromApiKey exchanges the key once and keeps a 30 s token for its requests', async () => {
  const t = await h.createTenant();
  const { seen, fetch } = counting();
  const renewed: Token[] = [];
  const client = clientFromApiKey(h.api.url, t.apiKey, { fetch, onRenewed: (tok) => void renewed.push(tok) });
  for (let i = 0; i < 10; i++) await unwrap(client.GET('/v1/usage'));
  assert.equal(seen.exchanges, 1, 'renewing 60 s before a 30 s expiry exchanged before every request');
  assert.equal(renewed.length, 1);
  assert.equal(renewed[0]!.role, 'tenant');
  assert.ok(
    seen.statuses.every((s) => s === 200),
    String(seen.statuses),
  );
});

test('the CLI (TIMESHARE_API_KEY) exchanges once for many requests of a 30 s token', async () => {
  const t = await h.createTenant();
  const home = await mkdtemp(path.join(os.tmpdir(), 'sdk-api-key-'));
  const saved = { key: process.env.TIMESHARE_API_KEY, xdg: process.env.XDG_CONFIG_HOME };
  process.env.TIMESHARE_API_KEY = t.apiKey;
  process.env.XDG_CONFIG_HOME = home;
  try {
    const cli = await countingGlobalFetch(async () => {
      const client = await createContext({ apiUrl: h.api.url }).tenant();
      for (let i = 0; i < 10; i++) await unwrap(client.GET('/v1/usage'));
    });
    assert.equal(cli.exchanges, 1, 'the CLI');
  } finally {
    for (const [name, value] of [
      ['TIMESHARE_API_KEY', saved.key],
      ['XDG_CONFIG_HOME', saved.xdg],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await rm(home, { recursive: true, force: true });
  }
});

test('the worker exchanges its node key once for many heartbeats with a 30 s token', async () => {
  const key = await h.admin(h.http.post('/v1/node-keys')).send({ name: 'short-tokens' }).expect(201);
  const worker = await countingGlobalFetch(async () => {
    const node = new ControlPlaneClient(h.api.url, key.body.apiKey);
    const nodeId = await node.register({
      name: 'short-tokens',
      devices: [{ index: 0, kind: 'cpu-virtual', memoryBytes: 1e9, freeMemoryBytes: 1e9, threads: 1 }],
    });
    for (let i = 0; i < 10; i++) await node.heartbeat(nodeId, [{ index: 0, freeMemoryBytes: 1e9 }]);
  });
  assert.equal(worker.exchanges, 1, 'the worker');
});

test('after an API restart with another signing secret a cached token is renewed once, on its first 401', async () => {
  const t = await h.createTenant();
  const anonymous = createTimeshareClient({ baseUrl: h.api.url });
  const cached = await unwrap(anonymous.POST('/v1/auth/token', { body: { apiKey: t.apiKey } }));
  const held = { token: cached.token, expiresAt: cached.expiresAt };
  const { seen, fetch } = counting();
  const client = clientFromApiKey(h.api.url, t.apiKey, { held, fetch });
  await unwrap(client.GET('/v1/usage'));
  assert.equal(seen.exchanges, 0, 'the cached token, while it is good');

  await h.api.stop();
  h.api = await startApi(
    { ...h.config, TIMESHARE_JWT_SECRET: randomBytes(32).toString('hex') },
    createLogger('api', h.config.LOG_LEVEL),
  );
  // What the user saw: a client that sends its cached token until `expiresAt` is refused.
  const stale = createTimeshareClient({ baseUrl: h.api.url, token: () => cached.token });
  await assert.rejects(unwrap(stale.GET('/v1/usage')), { status: 401, code: 'unauthorized' });

  seen.statuses.length = 0;
  const job = await unwrap(
    client.POST('/v1/jobs', { body: { name: 'after-restart', workflow: { task: { name: 'addition' } } } }),
  );
  assert.equal(job.name, 'after-restart', 'a request with a body is sent again whole');
  for (let i = 0; i < 5; i++) await unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id: job.id } } }));
  assert.deepEqual(seen.statuses, [401, 200, 201, 200, 200, 200, 200, 200], 'one refusal, one exchange');
  assert.equal(seen.exchanges, 1);
  assert.notEqual(held.token, cached.token, 'the renewal lands in `held`');
});

test('a key the API refuses too: its 401, after one exchange, not a loop', async () => {
  const t = await h.createTenant();
  const created = await h.admin(h.http.post(`/v1/tenants/${t.id}/keys`)).expect(201);
  await h.admin(h.http.delete(`/v1/tenants/${t.id}/keys/${created.body.id}`)).expect(204);
  // Its token from before a restart (another secret signed it), good for an hour.
  const old = issueToken(randomBytes(32).toString('hex'), 3600, {
    role: 'tenant',
    sub: t.id,
    keyId: created.body.id,
  });
  const { seen, fetch } = counting();
  const client = clientFromApiKey(h.api.url, created.body.apiKey, {
    held: { token: old.token, expiresAt: old.expiresAt.toISOString() },
    fetch,
  });
  await assert.rejects(unwrap(client.GET('/v1/usage')), { status: 401, code: 'unauthorized' });
  assert.equal(seen.exchanges, 1);
  assert.equal(seen.statuses.length, 2, `the request and the exchange: ${seen.statuses}`);
});
