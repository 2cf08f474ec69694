/**
 * Nothing is lost between the commit and what follows it: the API process is SIGKILLed after the
 * commit and before it answers (or wakes the scheduler), and Redis loses all its data; both times
 * the scheduler's snapshot holds the job exactly once, since the queue is the `queued` rows.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { readSnapshot } from '../../scheduler/rounds/read-snapshot.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort, startProcess, waitForHttp, type Proc } from '../helpers/processes.js';
import { deleteKeys, testPrefix } from '../helpers/redis.js';
import { testEnv } from '../helpers/api-harness.js';

let db: TestDatabase;
let prefix: string;
let env: Record<string, string>;
let url: string;
let pool: pg.Pool;
let proc: Proc | null = null;

before(async () => {
  db = await createTestDatabase();
  prefix = testPrefix();
  const port = await freePort();
  env = testEnv(db.url, prefix, { PORT: String(port), LOG_LEVEL: 'warn' });
  url = `http://127.0.0.1:${port}`;
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // The database is dropped WITH (FORCE) at the end; a connection still closing may be terminated.
  pool.on('error', () => undefined);
});
after(async () => {
  await proc?.kill('SIGKILL');
  await pool.end();
  await db.drop();
  await deleteKeys(prefix);
});

async function startApi(extra: Record<string, string> = {}) {
  proc = startProcess('api/main.ts', { ...env, ...extra });
  await waitForHttp(`${url}/readyz`, proc);
  return proc;
}

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      'Content-Type': 'application/json',
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}

test(
  'SIGKILL between commit and answer, then a Redis wipe: the scheduler sees the job exactly once each time',
  { timeout: 90_000 },
  async () => {
    const crashing = await startApi({ TIMESHARE_FAULT: 'crash_after_commit' });
    const tenant = await call('POST', '/v1/tenants', env.TIMESHARE_ADMIN_KEY!, { name: 'crashy' });
    assert.equal(tenant.status, 201);
    const token = (await call('POST', '/v1/auth/token', '', { apiKey: tenant.body.apiKey })).body.token;

    const spec = { name: 'survivor', workflow: { task: { name: 'addition' } } };
    await assert.rejects(
      call('POST', '/v1/jobs', token, spec, { 'Idempotency-Key': 'crash-1' }),
      'the request dies with the process',
    );
    assert.equal(await crashing.exited, null, 'killed by a signal');
    const queuedIds = async () => (await readSnapshot(pool, 10_000)).snapshot.queued.map((j) => j.id);
    assert.equal((await queuedIds()).length, 1, 'committed: the scheduler sees it though no one answered');

    await startApi();
    const list = await call('GET', '/v1/jobs', token);
    assert.equal(list.body.data.length, 1);
    const job = list.body.data[0];
    assert.equal(job.status, 'queued');
    assert.deepEqual(await queuedIds(), [job.id]);
    // The client's retry with its Idempotency-Key gets the same job, not a second one.
    const retry = await call('POST', '/v1/jobs', token, spec, { 'Idempotency-Key': 'crash-1' });
    assert.equal(retry.status, 201);
    assert.equal(retry.body.id, job.id);
    assert.deepEqual(await queuedIds(), [job.id]);

    // Redis keeps nothing on disk here: lose everything, restart, and nothing was in it to lose.
    await proc!.kill('SIGKILL');
    await deleteKeys(prefix);
    await startApi();
    assert.deepEqual(await queuedIds(), [job.id]);
    const after = await call('GET', '/v1/jobs', token);
    assert.equal(after.body.data.length, 1);
  },
);
