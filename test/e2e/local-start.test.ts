/**
 * `npm start` as a user runs it: the launcher (infra/local/start.ts) brings up the API, scheduler
 * and a worker, prints the URL and an admin key, and runs a submitted job. On Ctrl-C it stops in
 * order: the worker drains (the job checkpoints and goes back to the queue through the API) before
 * the API goes. Started again on the same database, the system resumes the job from that checkpoint.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deleteKeys, testPrefix, testRedisUrl } from '../helpers/redis.js';
import { freePort } from '../helpers/processes.js';
import { launchLocal } from '../helpers/npm-start.js';
import { steadyJob, waitFor } from '../helpers/cluster.js';

let db: TestDatabase;
let port: number;
const prefix = testPrefix();
const storage = mkdtempSync(path.join(tmpdir(), 'timeshare-start-'));
// Fixed across both launches, so the tenant's token outlives the restart.
const adminKey = `tsa_${randomBytes(16).toString('hex')}`;
const jwtSecret = randomBytes(32).toString('hex');

before(async () => {
  db = await createTestDatabase();
  port = await freePort();
});
after(async () => {
  await db.drop();
  await deleteKeys(prefix);
  rmSync(storage, { recursive: true, force: true });
});

const launch = (over: Record<string, string> = {}) =>
  launchLocal({
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    TIMESHARE_REDIS_PREFIX: prefix,
    TIMESHARE_STORAGE_ROOT: storage,
    TIMESHARE_ADMIN_KEY: adminKey,
    TIMESHARE_JWT_SECRET: jwtSecret,
    PORT: String(port),
    ...over,
  });

async function call<T>(base: string, route: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${route} → ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function inDatabase<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

test(
  'npm start runs a job; Ctrl-C drains it before the API stops; a restart resumes it',
  { timeout: 180_000 },
  async () => {
    const first = await launch();
    let token: string;
    let jobId: string;
    try {
      const tenant = await call<{ apiKey: string }>(first.url, '/v1/tenants', adminKey, { name: 'starter' });
      ({ token } = await call<{ token: string }>(first.url, '/v1/auth/token', '', { apiKey: tenant.apiKey }));
      ({ id: jobId } = await call<{ id: string }>(first.url, '/v1/jobs', token, steadyJob('started', 400)));
      await waitFor('a checkpoint', async () => {
        const r = await call<{ data: unknown[] }>(first.url, `/v1/jobs/${jobId}/checkpoints`, token);
        return r.data.length > 0;
      });
      // A second npm start beside it stops at once on the port, touching nothing: it used to take
      // the running API for its own, release the running worker's node (requeueing this job) and
      // start a second set of services against the same database.
      await assert.rejects(launch(), /127\.0\.0\.1:\d+ is in use: is Timeshare already running/);
      // On a port of its own it stops on the data folder instead: the two shared one outbox, one
      // checkpoint store and a private database's directory.
      await assert.rejects(
        launch({ PORT: String(await freePort()) }),
        /another npm start \(pid \d+\) is using .*: stop it first, or give this one a folder of its own with TIMESHARE_DATA_DIR/,
      );
      const job = await call<{ status: string }>(first.url, `/v1/jobs/${jobId}`, token);
      assert.equal(job.status, 'running', 'the job ran on, its node untouched');
      const nodes = await call<{ data: { status: string }[] }>(first.url, '/v1/nodes', adminKey);
      assert.deepEqual(
        nodes.data.map((n) => n.status),
        ['ready'],
      );
    } finally {
      assert.equal(await first.interrupt(), 0, first.output());
    }
    assert.match(first.output(), /\[start\] stopped\n/);
    assert.doesNotMatch(first.output(), /report to control plane failed/);

    // Everything is down; the database tells what the drain left.
    const saved = await inDatabase(async (c) => {
      const drained = await c.query(
        `SELECT 1 FROM job_events WHERE job_id = $1 AND type = 'job.queued' AND data->>'reason' = 'drained'`,
        [jobId],
      );
      assert.equal(drained.rowCount, 1, `requeued as drained:\n${first.output()}`);
      // The node said it was draining before handing the job back, so nothing placed it there again.
      const job = await c.query('SELECT status FROM jobs WHERE id = $1', [jobId]);
      assert.equal(job.rows[0].status, 'queued');
      const { rows } = await c.query('SELECT max(step)::int AS step FROM checkpoints WHERE job_id = $1', [
        jobId,
      ]);
      return rows[0].step as number;
    });

    const second = await launch();
    try {
      const running = await waitFor('the job to run again', async () => {
        const ev = await call<{ data: { type: string; data: { resumedFromStep?: number } }[] }>(
          second.url,
          `/v1/jobs/${jobId}/events?limit=1000`,
          token,
        );
        const runs = ev.data.filter((e) => e.type === 'job.running');
        return runs.length === 2 ? runs[1] : null;
      });
      assert.equal(running.data.resumedFromStep, saved);
      await call(second.url, `/v1/jobs/${jobId}/cancel`, token, {});
      // The first session's node key is revoked as the second mints its own: one live key, not one per session.
      const keys = await call<{ data: { name: string; revokedAt: string | null }[] }>(
        second.url,
        '/v1/node-keys',
        adminKey,
      );
      assert.deepEqual(
        keys.data.map((k) => ({ local: k.name.startsWith('local-worker '), live: k.revokedAt === null })),
        [
          { local: true, live: false },
          { local: true, live: true },
        ],
        JSON.stringify(keys.data),
      );
    } finally {
      assert.equal(await second.interrupt(), 0, second.output());
    }
  },
);
