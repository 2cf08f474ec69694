/**
 * Nothing is lost between PostgreSQL and the queue: the API process is SIGKILLed after the commit
 * and before the enqueue, and Redis loses all its data; both times a restart finds the job queued
 * exactly once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Queue } from 'bullmq';
import { JOBS_QUEUE, queueEntryId, redisNames } from '../../common/queues.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort, startProcess, waitForHttp, type Proc } from '../helpers/processes.js';
import { deleteKeys, testPrefix, testRedisUrl } from '../helpers/redis.js';
import { testEnv } from '../helpers/api-harness.js';

let db: TestDatabase;
let prefix: string;
let env: Record<string, string>;
let url: string;
let queue: Queue;
let proc: Proc | null = null;

before(async () => {
  db = await createTestDatabase();
  prefix = testPrefix();
  const port = await freePort();
  env = testEnv(db.url, prefix, { PORT: String(port), LOG_LEVEL: 'warn' });
  url = `http://127.0.0.1:${port}`;
  queue = new Queue(JOBS_QUEUE, {
    connection: { url: testRedisUrl() },
    prefix: redisNames(prefix).bullPrefix,
  });
});
after(async () => {
  await proc?.kill('SIGKILL');
  await queue.close();
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
  'SIGKILL between commit and enqueue, then a Redis wipe: the job is queued exactly once each time',
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
    assert.equal(await queue.count(), 0, 'committed but never enqueued');

    await startApi();
    const list = await call('GET', '/v1/jobs', token);
    assert.equal(list.body.data.length, 1);
    const job = list.body.data[0];
    assert.equal(job.status, 'queued');
    assert.equal(await queue.count(), 1);
    assert.ok(await queue.getJob(queueEntryId(job.id, 0)));
    // The client's retry with its Idempotency-Key gets the same job, not a second one.
    const retry = await call('POST', '/v1/jobs', token, spec, { 'Idempotency-Key': 'crash-1' });
    assert.equal(retry.status, 201);
    assert.equal(retry.body.id, job.id);
    assert.equal(await queue.count(), 1);

    // Redis keeps nothing on disk here: lose everything, restart, and the queue is rebuilt.
    await proc!.kill('SIGKILL');
    await deleteKeys(prefix);
    assert.equal(await queue.count(), 0);
    await startApi();
    assert.equal(await queue.count(), 1);
    assert.ok(await queue.getJob(queueEntryId(job.id, 0)));
    const after = await call('GET', '/v1/jobs', token);
    assert.equal(after.body.data.length, 1);
  },
);
